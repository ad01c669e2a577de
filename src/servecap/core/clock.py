"""The one clock: `perf_counter_ns` for every event, one wall-clock anchor per run, and
waiting on it to the nanosecond target."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

now_ns = time.perf_counter_ns
# The loop's timers are coarse (epoll and libuv wait in whole milliseconds, rounded up), so
# a plain sleep to a target wakes up to ~1 ms late: sleep to this much before it instead.
FINE_WAIT_NS = 1_000_000


async def sleep_until(target_ns: int) -> None:
    """Return at `target_ns` (a `now_ns` reading) or as soon after as the loop allows, never
    before: the last `FINE_WAIT_NS` yield to the loop (other work runs) until it has come."""
    coarse = target_ns - FINE_WAIT_NS - now_ns()
    if coarse > 0:
        await asyncio.sleep(coarse / 1e9)
    while now_ns() < target_ns:
        await asyncio.sleep(0)


@dataclass(frozen=True, slots=True)
class ClockAnchor:
    """Pairs a wall-clock instant with the monotonic counter so stored ns can be dated."""

    wall_ns: int
    perf_ns: int

    @classmethod
    def take(cls) -> ClockAnchor:
        return cls(wall_ns=time.time_ns(), perf_ns=time.perf_counter_ns())
