"""Drive a model engine in real time: one asyncio task, absolute target times.

Virtual time ``v`` maps to real time ``t0 + v / time_scale`` on ``time.monotonic()``. The
loop sleeps until the target of the engine's next event (a coarse event-loop timer, which
can wake a millisecond late, then a blocking ``time.sleep`` of the last < 1 ms, which
releases the GIL and is precise to tens of microseconds), advances the
engine and hands each request's token emissions to its sink, synchronously: the HTTP
layer's sinks write their chunks to the sockets right there, so one step costs one wake-up
however many streams it serves. Targets are absolute, so lateness never accumulates into
drift.

Three latenesses are kept, in real seconds after the event's target: ``lateness`` (the
engine event fired late), ``chunks`` (each emission's delivery returned late: what clients
see, the event's lateness plus the writes before it in that step) and ``first_tokens`` (the
same for first tokens only, which the engine orders first; they make TTFT).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol

from servecap.sim.engines import make_engine
from servecap.sim.model import Emission
from servecap.sim.params import ModelParams

FINE_S = 0.001
log = logging.getLogger(__name__)


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

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0


class EngineLoop:
    """The engine plus the per-request queues, advanced by ``run()``."""

    def __init__(self, params: ModelParams, time_scale: float = 1.0, seed: int = 0) -> None:
        if not time_scale > 0:
            raise ValueError("time_scale must be > 0")
        self.engine = make_engine(params, seed=seed)
        self.scale = time_scale
        self.lateness = Lateness()
        self.chunks = Lateness()
        self.first_tokens = Lateness()
        self.requests_done = 0
        self._sinks: dict[int, Sink] = {}
        self._next_id = 0
        self._t0 = time.monotonic()
        self._wake: asyncio.Event | None = None
        self._awaiting: float | None = None

    def virtual_now(self) -> float:
        """Current model time in seconds."""
        return (time.monotonic() - self._t0) * self.scale

    def submit(self, prompt_tokens: int, max_tokens: int, sink_for: Callable[[int], Sink]) -> int:
        """Enter a request now; its emissions go to ``sink_for(request id)``. Returns the id."""
        rid = self._next_id
        self._next_id += 1
        self._sinks[rid] = sink_for(rid)
        self.engine.add(rid, prompt_tokens, max_tokens, self.virtual_now())
        due = self.engine.next_time()
        if self._wake is not None and (self._awaiting is None or (due or 0.0) < self._awaiting):
            self._wake.set()
        return rid

    def cancel(self, rid: int) -> None:
        """Drop a request whose client went away (no-op once it finished)."""
        if self._sinks.pop(rid, None) is not None:
            self.engine.cancel(rid)

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

    def _deliver(self, emissions: Iterable[Emission], target: float) -> None:
        # the hot loop of the simulator (once per chunk): lateness is summed in locals and
        # folded into the counters once per step
        sinks, clock = self._sinks, time.monotonic
        total = worst = first_total = first_worst = 0.0
        count = first_count = 0
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
            late = clock() - target
            total += late
            count += 1
            if late > worst:
                worst = late
            if em.first:
                first_total += late
                first_count += 1
                first_worst = max(first_worst, late)
        self.chunks.add_many(total, count, worst)
        self.first_tokens.add_many(first_total, first_count, first_worst)
