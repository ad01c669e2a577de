"""The performance model: a step-based continuous-batching scheduler in virtual time.

Pure code, no sockets and no clocks: a driver (the closed-loop sweep or the server's engine
loop) adds requests with their arrival time, asks ``next_time()`` when the next event is due
and calls ``advance(t)`` at that time to receive the token emissions.

Each step's duration comes from the cost model (``step_cost``), times a seeded jitter
factor. Prompts are prefilled in chunks of at most
``prefill_budget_tokens`` per step; a sequence emits its first token at the end of the step
that finishes its prompt and then 1 token a step (``1 + accepted`` drafts when speculative).
Admission is FIFO, limited by ``max_num_seqs`` and a KV-cache budget that reserves
``prompt + max_tokens`` tokens per admitted request (reservation, no preemption); requests
beyond it wait, which is where TTFT jumps. With ``prefix_caching``, a request prefills only
what the cache lacks (``prefix_cache``). While a batch runs, a request that reaches the
scheduler is held for a seeded time (``admission_hold``: its mean in ms, or in steps,
growing with the load up to a knee where the profile has one), and held requests whose
time is up join the batch together once there are at least ``admit_ratio * running`` of
them, so prefills batch together (with a knee there is no such gate: each joins when its
time is up). An idle engine admits at once, and requests that reach it within ``gather_ms`` of that
start join without a hold.

Two scheduling policies are set from the engine (``ModelParams``). With ``prefill_alone``
a step that prefills serves no decoding sequence: SGLang runs a prefill batch on its own
unless ``--enable-mixed-chunk`` is given, so the running streams pause for it (vLLM mixes
prefill chunks into the decode batch, the default here). With ``output_lag`` a step followed
by a prefill step delivers its tokens when that prefill ends (SGLang's overlap scheduler
with an eager prefill launch; see ``output_lag``).

The hold is per request and memoryless on purpose: a gate that opened a fixed interval after
the last admission made a request's wait a cliff in its arrival phase, so a client's few
milliseconds of turnaround flipped a closed loop between lock-step cycles.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from servecap.sim.model.admission import draw_hold, gate_ratio, hold_mean_s
from servecap.sim.model.emissions import NO_EMISSIONS, Emission, StepEmissions
from servecap.sim.model.output_lag import OutputLag
from servecap.sim.model.params import ModelParams
from servecap.sim.model.prefix_cache import KVSpace
from servecap.sim.model.step_cost import accepted_drafts, expected_tokens_per_step, step_ms
from servecap.sim.model.warmup import EngineSlowdown

# builds an Emission without NamedTuple's Python-level __new__ (half the cost, once a chunk)
_emission = tuple.__new__


class Engine(Protocol):
    """What a driver needs from a model engine."""

    def add(
        self, rid: int, prompt_tokens: int, max_tokens: int, now: float, blocks: Sequence[int] = ()
    ) -> None: ...

    def cancel(self, rid: int) -> None: ...

    def next_time(self) -> float | None: ...

    def advance(self, now: float) -> list[Emission]: ...

    def finish(self, now: float) -> StepEmissions: ...

    def plan(self) -> None: ...

    def cached_tokens(self, rid: int) -> int: ...

    def reset_prefix_cache(self) -> int: ...


@dataclass
class Counters:
    """Cumulative counts and gauges exposed by ``/metrics``."""

    prompt_tokens: int = 0
    generation_tokens: int = 0
    drafts: int = 0  # draft proposals: one per decoding sequence per speculative step
    draft_tokens: int = 0
    accepted_tokens: int = 0
    running: int = 0
    waiting: int = 0
    kv_usage: float = 0.0
    steps: int = 0
    prefix_queries: int = 0  # prompt tokens looked up in the prefix cache
    prefix_hits: int = 0  # of which the cache held


@dataclass(slots=True)
class _Seq:
    rid: int
    prompt: int
    max_tokens: int
    ready: float
    eligible: float = 0.0  # when the admission hold (if any) is over
    gathered: bool = False  # joins the batch an idle engine just started, no hold
    prefill_left: int = 0
    generated: int = 0
    cancelled: bool = False
    blocks: tuple[int, ...] = ()  # prefix-cache block hashes of the prompt (sim/blocks.py)

    def __post_init__(self) -> None:
        self.prefill_left = self.prompt

    @property
    def reserve(self) -> int:
        return self.prompt + self.max_tokens


@dataclass
class _Step:
    end: float
    prefilled: list[_Seq] = field(default_factory=list)
    decoded: list[_Seq] = field(default_factory=list)
    # tokens each decoded sequence receives, in the same order; None: one each (no
    # speculation), which spares a tuple per sequence per step on the common path
    tokens: list[int] | None = None
    prefill_tokens: int = 0  # prompt tokens the step prefills


class StepEngine:
    """Continuous batching in steps (see the module docstring)."""

    def __init__(self, params: ModelParams, seed: int = 0) -> None:
        self.p = params
        self.counters = Counters()
        self._rng = np.random.default_rng(seed)
        self._arrival_rng = np.random.default_rng([seed, 1])
        self._hold_rng = np.random.default_rng([seed, 2])
        self._pending: list[tuple[float, int, _Seq]] = []  # heap by ready time
        self._waiting: deque[_Seq] = deque()
        self._running: list[_Seq] = []
        self._kv = KVSpace.for_params(params)
        self._step: _Step | None = None
        self._clock = 0.0
        self._batch_start = -np.inf  # when an idle engine last started a batch
        self._last_step_s = 0.0  # duration of the step planned last
        self._lag = OutputLag() if params.output_lag else None
        self._slowdown = EngineSlowdown(params)
        # prompt tokens each admitted request found cached, until its usage reads them
        self._cached: dict[int, int] = {}

    def cached_tokens(self, rid: int) -> int:
        """Prompt tokens request ``rid`` found in the prefix cache (its usage's
        ``cached_tokens``); read once, when its last chunk is built."""
        return self._cached.pop(rid, 0)

    def reset_prefix_cache(self) -> int:
        """Drop the idle cached blocks; returns how many."""
        return self._kv.reset()

    def add(
        self, rid: int, prompt_tokens: int, max_tokens: int, now: float, blocks: Sequence[int] = ()
    ) -> None:
        """A request arrives at ``now``; the scheduler sees it ``frontend_ms`` later (spread by
        ``frontend_jitter``)."""
        spread = self.p.frontend_jitter * (2.0 * float(self._arrival_rng.random()) - 1.0)
        ready = now + self.p.frontend_ms * (1.0 + spread) / 1000.0
        seq = _Seq(rid, max(1, prompt_tokens), max(1, max_tokens), ready, blocks=tuple(blocks))
        self._slowdown.arrived(now)
        heapq.heappush(self._pending, (ready, rid, seq))
        self._gauges()

    def cancel(self, rid: int) -> None:
        """Forget a request (client went away); frees its KV reservation."""
        if any(item[1] == rid for item in self._pending):
            self._pending = [item for item in self._pending if item[1] != rid]
            heapq.heapify(self._pending)
        for seq in list(self._waiting):
            if seq.rid == rid:
                self._waiting.remove(seq)
        if self._lag is not None:
            self._lag.drop(rid)
        for seq in list(self._running):
            if seq.rid == rid:
                seq.cancelled = True
                self._running.remove(seq)
                self._kv.release(rid)
        self._cached.pop(rid, None)
        self._gauges()

    def next_time(self) -> float | None:
        """Virtual time of the next event, or None when there is nothing to do."""
        if self._step is not None:
            return self._step.end
        if self._running or self._waiting:
            return self._clock
        if self._pending:
            first = self._pending[0][0]
            return max(self._clock, first + self.p.idle_window_ms / 1000.0)
        return None

    def advance(self, now: float) -> list[Emission]:
        """Finish the step due at ``now`` (if any) and plan the next one."""
        out = self.finish(now).all()
        self.plan()
        return out

    def finish(self, now: float) -> StepEmissions:
        """The first half of ``advance``: finish the step due at ``now``, if any. Its first
        tokens are built at once; the rest is lazy, so a real-time driver writes the first
        tokens before the rest of a big batch is even counted. The driver must consume
        ``rest`` before it calls ``plan``, which does not delay the tokens either (the plan's
        virtual time is the same either way). With ``output_lag`` the step's tokens are
        built at once and the next step is planned here (``_after_launch``)."""
        if self._step is None:
            self._clock = max(self._clock, now)
            return NO_EMISSIONS
        if now < self._step.end:
            return NO_EMISSIONS
        self._clock = self._step.end
        step, self._step = self._step, None
        done: list[_Seq] = []
        first = self._first_emissions(step, done)
        out = StepEmissions(first, self._rest_emissions(step, done, len(first)))
        return out if self._lag is None else self._after_launch(out, self._lag)

    def plan(self) -> None:
        """The second half of ``advance``: plan the next step at the engine's clock."""
        if self._step is None:
            self._plan(self._clock)

    # -- internals -------------------------------------------------------------------------

    def _after_launch(self, out: StepEmissions, lag: OutputLag) -> StepEmissions:
        """``output_lag``: plan (launch) the next step first, then let ``lag`` decide what
        goes out; the step's bookkeeping runs here, as its ``rest`` is consumed."""
        now = StepEmissions(out.first, list(out.rest))
        self._plan(self._clock)
        return lag.release(now, self._step is not None and self._step.prefill_tokens > 0)

    def _admit(self, t: float) -> None:
        while self._pending and self._pending[0][0] <= t:
            seq = heapq.heappop(self._pending)[2]
            window = self.p.gather_ms / 1000.0
            seq.gathered = window > 0.0 and seq.ready <= self._batch_start + window
            seq.eligible = seq.ready + self._hold(busy=bool(self._running) and not seq.gathered)
            self._waiting.append(seq)
        if not self._waiting:
            return
        if self._running:
            due = [seq for seq in self._waiting if seq.eligible <= t]
            gathered = any(seq.gathered for seq in due)
            gate = gate_ratio(self.p)
            if not due or not (gathered or len(due) >= gate * len(self._running)):
                return
        else:
            due = list(self._waiting)
            self._batch_start = t
        for seq in due:
            if len(self._running) >= self.p.max_num_seqs:
                break
            if self._running and not self._kv.fits(seq):
                break
            self._waiting.remove(seq)
            self._running.append(seq)
            seq.prefill_left -= (cached := self._kv.admit(seq))  # it prefills what is not cached
            if self._kv.caching:
                self._cached[seq.rid] = cached
            self.counters.prompt_tokens += cached  # vLLM counts cached prompt tokens too

    def _hold(self, busy: bool) -> float:
        """Seconds a request reaching the scheduler is held (seeded; see ``admission_hold``):
        none when the engine is idle."""
        if not busy:
            return 0.0
        held = len(self._running) + len(self._waiting)
        mean_s = hold_mean_s(self.p, held, self._last_step_s, self._decode_step_s)
        return draw_hold(self._hold_rng, mean_s, self.p.admit_hold_shape)

    def _decode_step_s(self) -> float:
        """Seconds of one decode step of the running batch, without prefill or jitter."""
        n = len(self._running)
        return step_ms(self.p, n, 0, self._context_tokens(), self._spec_on()) / 1000.0

    def _context_tokens(self) -> int:
        """Tokens the running batch holds in its KV (0 where the profile does not price them)."""
        if not self.p.ctx_ms_per_ktoken:
            return 0
        return sum(s.prompt - s.prefill_left + s.generated for s in self._running)

    def _plan(self, t: float) -> None:
        self._admit(t)
        if not self._running:
            self._gauges()
            return
        step = _Step(end=t)
        budget = self.p.prefill_budget_tokens
        prefill_tokens = 0
        decoding: list[_Seq] = []
        for seq in self._running:
            if seq.prefill_left > 0:
                chunk = min(seq.prefill_left, budget)
                if chunk > 0:
                    seq.prefill_left -= chunk
                    budget -= chunk
                    prefill_tokens += chunk
                    self.counters.prompt_tokens += chunk
                    self._kv.computed(seq.rid, seq.prompt - seq.prefill_left)
                    if seq.prefill_left == 0:
                        step.prefilled.append(seq)
            else:
                decoding.append(seq)
        alone = self.p.prefill_alone and prefill_tokens > 0
        if alone:
            decoding = []  # the running streams pause while the prefill batch runs
        step.decoded, step.tokens = decoding, self._decode_plan(decoding)
        step.prefill_tokens = prefill_tokens
        ms = self._duration(len(decoding), prefill_tokens, context=not alone)
        step.end = t + ms * self._slowdown.at(t) / 1000.0
        self._last_step_s = step.end - t
        self._step = step
        self.counters.steps += 1
        self._gauges()

    def _spec_on(self) -> bool:
        return self.p.speculative and not (self.p.spec_off_when_waiting and self._memory_bound())

    def _memory_bound(self) -> bool:
        """True when the head of the queue does not fit: no sequence slot or KV room left.
        (Requests still in their admission hold are not memory pressure.)"""
        if not self._waiting:
            return False
        head = self._waiting[0]
        return len(self._running) >= self.p.max_num_seqs or not self._kv.fits(head)

    def _decode_plan(self, decoding: list[_Seq]) -> list[int] | None:
        """Tokens each decoding sequence gets this step; None when it is one each."""
        if not decoding or not self._spec_on():
            return None
        k = self.p.num_spec_tokens
        accepted = accepted_drafts(self._rng, k, self.p.acceptance, len(decoding))
        self.counters.drafts += len(decoding)
        self.counters.draft_tokens += k * len(decoding)
        self.counters.accepted_tokens += int(accepted.sum())
        return [
            min(1 + int(a), seq.max_tokens - seq.generated)
            for seq, a in zip(decoding, accepted.tolist(), strict=True)
        ]

    def _duration(self, n_decoding: int, prefill_tokens: int, context: bool = True) -> float:
        # a prefill step that runs alone reads no decode context: its prompts' own
        # attention is in the per-token prefill cost
        ctx = self._context_tokens() if context else 0
        ms = step_ms(self.p, n_decoding, prefill_tokens, ctx, n_decoding > 0 and self._spec_on())
        if self.p.jitter > 0.0:
            ms *= max(0.05, 1.0 + self.p.jitter * float(self._rng.standard_normal()))
        return ms

    def _first_emissions(self, step: _Step, done: list[_Seq]) -> list[Emission]:
        # a step's first tokens are few (bounded by the prefill budget): built eagerly
        out: list[Emission] = []
        for seq in step.prefilled:
            if seq.cancelled:
                continue
            seq.generated = 1
            finished = seq.max_tokens <= 1
            if finished:
                done.append(seq)
            out.append(_emission(Emission, (seq.rid, 1, True, finished)))
        return out

    def _rest_emissions(self, step: _Step, done: list[_Seq], tokens: int) -> Iterator[Emission]:
        # the decode emissions are many: yielded one by one, and the step's bookkeeping
        # (token counter, finished sequences) runs once they are all consumed
        counts = step.tokens if step.tokens is not None else itertools.repeat(1)
        for seq, n in zip(step.decoded, counts, strict=False):  # repeat(1) is endless
            if seq.cancelled:
                continue
            seq.generated += n
            tokens += n
            finished = seq.generated >= seq.max_tokens
            if finished:
                done.append(seq)
            yield _emission(Emission, (seq.rid, n, False, finished))
        self.counters.generation_tokens += tokens
        if done:
            ids = {seq.rid for seq in done}
            self._running = [s for s in self._running if s.rid not in ids]
            self._kv.release(*(seq.rid for seq in done))

    def _gauges(self) -> None:
        c = self.counters
        c.running = len(self._running)
        c.waiting = len(self._waiting) + len(self._pending)
        c.kv_usage = self._kv.usage
        c.prefix_queries, c.prefix_hits = self._kv.queries, self._kv.hits


__all__ = [
    "Counters",
    "Engine",
    "StepEngine",
    "accepted_drafts",
    "expected_tokens_per_step",
]
