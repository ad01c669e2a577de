"""Drive a model engine in real time: one asyncio task, absolute target times.

Virtual time ``v`` maps to real time ``t0 + v / time_scale`` on ``time.monotonic()``. The
loop sleeps until the target of the engine's next event (a coarse event-loop timer, which
can wake a millisecond late, then a blocking ``time.sleep`` of the last < 1 ms, which
releases the GIL and is precise to tens of microseconds), advances the engine and hands
each request's token emissions to its sink, synchronously. The HTTP layer's sinks build
their chunks into a write batch that the loop flushes twice a step: the step's first tokens
as soon as they are built (they make TTFT), then everything else; the engine hands the two
apart (``StepEmissions(first, rest)``), so neither side relies on an ordering convention.
So one step costs one wake-up however many streams it serves. Targets are absolute, so
lateness never accumulates into drift.

Three latenesses are kept, in real seconds after the event's target: ``lateness`` (the
engine event fired late), ``chunks`` (each emission's write, what clients see) and
``first_tokens`` (the same for first tokens only). A flush's writes are not timed one by
one (that would cost a clock read each): the k-th of n writes in a flush that started ``a``
and ended ``b`` after the target is counted as ``a + (b - a) * k / n``, exact when writes
cost the same.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from servecap.sim.model.emissions import Emission, StepEmissions
from servecap.sim.model.engines import make_engine
from servecap.sim.model.params import ModelParams
from servecap.sim.server.histogram import ServedLatency

FINE_S = 0.001
log = logging.getLogger(__name__)


class Batch(Protocol):
    """Where sinks' writes wait during a step (``wire.WriteBatch``)."""

    def begin(self) -> None: ...

    def flush(self) -> None: ...


class _Unbatched:
    """No batch: sinks act at once (sinks that write nothing, tests)."""

    def begin(self) -> None:
        pass

    def flush(self) -> None:
        pass


class Sink(Protocol):
    """Where one request's emissions go (called on the event loop, must not block)."""

    def emit(self, em: Emission) -> None: ...


@dataclass
class Lateness:
    """How late engine events fired against their targets (seconds, real time)."""

    count: int = 0
    total: float = 0.0
    max: float = 0.0

    def add(self, late: float) -> None:
        self.add_many(late, 1, late)

    def add_many(self, total: float, count: int, worst: float) -> None:
        """Fold in ``count`` latenesses summing to ``total``, the largest ``worst``."""
        self.count += count
        self.total += total
        self.max = max(self.max, worst)

    def add_spread(self, count: int, start: float, end: float) -> None:
        """Fold in ``count`` writes made one after another from ``start`` to ``end`` late:
        the k-th counts ``start + (end - start) * k / count``."""
        if count:
            self.add_many(count * start + (end - start) * (count + 1) / 2, count, end)

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0


class EngineLoop:
    """The engine plus the per-request queues, advanced by ``run()``."""

    def __init__(
        self,
        params: ModelParams,
        time_scale: float = 1.0,
        seed: int = 0,
        batch: Batch | None = None,
    ) -> None:
        if not time_scale > 0:
            raise ValueError("time_scale must be > 0")
        self.engine = make_engine(params, seed=seed)
        self.batch: Batch = batch or _Unbatched()
        self.scale = time_scale
        self.lateness = Lateness()
        self.chunks = Lateness()
        self.first_tokens = Lateness()
        self.deliver_seconds = 0.0  # building and writing steps' chunks (real s)
        self.write_seconds = 0.0  # of which writing them to the sockets
        self.requests_done = 0
        self.served = ServedLatency()
        self._sinks: dict[int, Sink] = {}
        self._next_id = 0
        self._t0 = time.monotonic()
        self._wake: asyncio.Event | None = None
        self._awaiting: float | None = None
        # told the running batch's size whenever it may have changed (`server.power`)
        self.on_batch: Callable[[int], None] | None = None

    def _batch_changed(self) -> None:
        if self.on_batch is not None:
            self.on_batch(self.engine.counters.running)

    def virtual_now(self) -> float:
        """Current model time in seconds."""
        return (time.monotonic() - self._t0) * self.scale

    def submit(
        self,
        prompt_tokens: int,
        max_tokens: int,
        sink_for: Callable[[int], Sink],
        blocks: Sequence[int] = (),
    ) -> int:
        """Enter a request now; its emissions go to ``sink_for(request id)``. Returns the id.
        ``blocks``: its prompt's prefix-cache block hashes (``blocks.block_hashes``)."""
        rid = self._next_id
        self._next_id += 1
        self._sinks[rid] = sink_for(rid)
        self.served.submitted(rid, time.monotonic())
        self.engine.add(rid, prompt_tokens, max_tokens, self.virtual_now(), blocks)
        self._batch_changed()
        due = self.engine.next_time()
        if self._wake is not None and (self._awaiting is None or (due or 0.0) < self._awaiting):
            self._wake.set()
        return rid

    def cached_tokens(self, rid: int) -> int:
        """Prompt tokens request ``rid`` found in the prefix cache (read once)."""
        return self.engine.cached_tokens(rid)

    def reset_prefix_cache(self) -> int:
        """Empty the prefix cache of every block no running request holds."""
        return self.engine.reset_prefix_cache()

    def cancel(self, rid: int) -> None:
        """Drop a request whose client went away (no-op once it finished)."""
        if self._sinks.pop(rid, None) is not None:
            self.engine.cancel(rid)
            self._batch_changed()
        self.served.forget(rid)

    async def _sleep_until(self, wake: asyncio.Event, target: float) -> bool:
        """Sleep until ``target``; False when an earlier event arrived first."""
        delay = target - time.monotonic() - FINE_S
        if delay > 0:
            wake.clear()
            try:
                await asyncio.wait_for(wake.wait(), delay)
                return False
            except TimeoutError:
                pass
        rest = target - time.monotonic()
        if rest > 0:
            time.sleep(rest)
        return True

    async def run(self) -> None:
        """Advance the engine forever (cancel the task to stop)."""
        wake = self._wake = asyncio.Event()
        while True:
            due = self._awaiting = self.engine.next_time()
            if due is None:
                wake.clear()
                await wake.wait()
                continue
            target = self._t0 + due / self.scale
            if not await self._sleep_until(wake, target):
                continue
            self.lateness.add(max(0.0, time.monotonic() - target))
            self._deliver(self.engine.finish(due), target)
            self.engine.plan()
            self._batch_changed()

    def _deliver(self, step: StepEmissions, target: float) -> None:
        # the step's first tokens are written (and timed into ``first_tokens``) before the
        # rest is even built; the rest is timed into ``chunks`` only
        began = time.monotonic()
        self.batch.begin()
        tokens_before = self.engine.counters.generation_tokens
        n_first = self._emit(step.first)
        if n_first:
            self._flush(self.first_tokens, n_first, target)
            self.batch.begin()
        written = time.monotonic()  # when the first tokens went out, not when they were due
        for em in step.first:
            self.served.first_token(em.rid, written)
        n_rest = self._emit(step.rest)
        decoded = self.engine.counters.generation_tokens - tokens_before - len(step.first)
        self.served.step(time.monotonic(), n_rest, decoded)
        if n_rest or not n_first:
            self._flush(self.chunks, n_rest, target)
        self.deliver_seconds += time.monotonic() - began

    def _emit(self, emissions: Iterable[Emission]) -> int:
        # the hot loop of the simulator (once per chunk): hand each emission to its sink
        sinks = self._sinks
        built = 0
        for em in emissions:
            sink = sinks.get(em.rid)
            if sink is None:
                continue
            if em.done:
                del sinks[em.rid]
                self.requests_done += 1
            try:
                sink.emit(em)
            except Exception:  # one broken stream must not stop the engine for all
                log.exception("simulator: delivering to request %d failed", em.rid)
                self.cancel(em.rid)
            built += 1
        return built

    def _flush(self, into: Lateness, count: int, target: float) -> None:
        """Write the batch; its ``count`` writes go into ``into`` and ``chunks``."""
        start = time.monotonic() - target
        self.batch.flush()
        end = time.monotonic() - target
        self.write_seconds += end - start
        into.add_spread(count, start, end)
        if into is not self.chunks:
            self.chunks.add_spread(count, start, end)
