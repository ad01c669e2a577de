"""The fixed-schedule profiles' engine: an exact schedule that no load changes (for tests),
behind an optional serial stage (``fixed_serial_ms``) whose queue is the only load effect."""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from servecap.sim.model.emissions import Emission, StepEmissions
from servecap.sim.model.params import ModelParams
from servecap.sim.model.step_engine import Counters
from servecap.sim.model.warmup import EngineSlowdown


class FixedEngine:
    """Exact schedule, independent of load: first chunk at TTFT, then one chunk of
    ``tokens_per_chunk`` tokens every ``tokens_per_chunk * ITL`` (each stretched by the
    warm-up and drift factor at the time it is scheduled from, where the profile has one).
    With ``fixed_serial_ms`` a request first waits for a serial stage, then spends that long
    in it: the schedule starts when it leaves."""

    def __init__(self, params: ModelParams) -> None:
        self.p = params
        self.counters = Counters()
        self._heap: list[tuple[float, int, int]] = []
        self._left: dict[int, int] = {}
        self._started: set[int] = set()
        self._seq = 0
        self._slowdown = EngineSlowdown(params)
        self._serial_free = 0.0  # when the serial stage is next free

    def add(
        self, rid: int, prompt_tokens: int, max_tokens: int, now: float, blocks: Sequence[int] = ()
    ) -> None:
        """Schedule the first chunk of a new request (a fixed schedule caches nothing)."""
        self._slowdown.arrived(now)
        ttft = (self.p.fixed_ttft_ms or 0.0) / 1000.0 * self._slowdown.at(now)
        # requests reach add() in arrival order, so the serial stage is FIFO
        leaves = max(now, self._serial_free) + self.p.fixed_serial_ms / 1000.0
        self._serial_free = leaves
        self._left[rid] = max(1, max_tokens)
        self.counters.prompt_tokens += max(1, prompt_tokens)
        self._push(leaves + ttft, rid)

    def cancel(self, rid: int) -> None:
        """Drop a request; its queued events are skipped."""
        self._left.pop(rid, None)
        self._started.discard(rid)
        self.counters.running = len(self._left)

    def next_time(self) -> float | None:
        """Time of the earliest scheduled chunk."""
        while self._heap and self._heap[0][2] not in self._left:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    def finish(self, now: float) -> StepEmissions:
        """``advance``'s chunks split into first tokens and the rest (nothing to plan)."""
        out = self.advance(now)
        return StepEmissions([em for em in out if em.first], [em for em in out if not em.first])

    def plan(self) -> None:
        """Nothing to plan on a fixed schedule."""

    def cached_tokens(self, rid: int) -> int:
        """A fixed schedule caches nothing."""
        return 0

    def reset_prefix_cache(self) -> int:
        """Nothing cached, nothing to drop."""
        return 0

    def advance(self, now: float) -> list[Emission]:
        """Emit every chunk due at or before ``now``."""
        out: list[Emission] = []
        gap = self.p.tokens_per_chunk * (self.p.fixed_itl_ms or 0.0) / 1000.0
        while self._heap and self._heap[0][0] <= now:
            t, _, rid = heapq.heappop(self._heap)
            left = self._left.get(rid)
            if left is None:
                continue
            n = min(self.p.tokens_per_chunk, left)
            first = rid not in self._started
            self._started.add(rid)
            left -= n
            out.append(Emission(rid, n, first, left == 0))
            self.counters.generation_tokens += n
            if left == 0:
                del self._left[rid]
                self._started.discard(rid)
            else:
                self._left[rid] = left
                self._push(t + gap * self._slowdown.at(t), rid)
        self.counters.running = len(self._left)
        return out

    def _push(self, t: float, rid: int) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (t, self._seq, rid))
        self.counters.running = len(self._left)
