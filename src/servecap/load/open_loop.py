"""Open loop: requests arrive at an offered rate, whether or not earlier ones have ended.

Target times come from `workload.arrivals` (`t0 + cumulative gaps`, seeded) and each send
sleeps until its absolute target, never for a gap after the last send, so a late wake-up
delays one request without shifting the rest. Each record's `scheduled_at` is its target:
`sent_at - scheduled_at` is the send lateness, and TTFT/latency from `scheduled_at` are
what a user arriving then would see (no coordinated omission).

The cap on requests in flight (`max_concurrency`) is a semaphore taken after the target
time: an arrival that finds it full waits, its record gets `admitted_at` when it gets in,
and that wait stays inside `sent_at - scheduled_at`.
"""

from __future__ import annotations

import asyncio

from servecap.core.clock import now_ns
from servecap.core.load_spec import OpenLevel
from servecap.core.records import RequestRecord
from servecap.load.scheduler import LevelIO, in_task_group
from servecap.workload.arrivals import ArrivalProcess

NS_PER_S = 1_000_000_000
# The loop's timers are coarse (uvloop/libuv: whole milliseconds, rounded), so a plain
# sleep to the target can wake up to ~1 ms early or late; an early wake-up would send
# before the target. Sleep to this much before it, then yield to the loop (other requests'
# chunks are handled meanwhile) until the target has come: never early.
FINE_WAIT_NS = 1_000_000


async def sleep_until(target_ns: int) -> None:
    """Return at `target_ns` (perf_counter ns) or as soon after as the loop allows."""
    coarse = target_ns - FINE_WAIT_NS - now_ns()
    if coarse > 0:
        await asyncio.sleep(coarse / NS_PER_S)
    while now_ns() < target_ns:
        await asyncio.sleep(0)


def level_offsets_ns(level: OpenLevel) -> list[int]:
    """The level's target send times, ns from its start (the arrivals' own contract)."""
    process = ArrivalProcess(level.arrival, level.rate, level.burstiness)  # type: ignore[arg-type]
    offsets = process.offsets(seed=level.seed, count=level.requests, duration=level.duration_s)
    return [round(float(t) * NS_PER_S) for t in offsets]


async def run_open_level(level: OpenLevel, io: LevelIO) -> None:
    """Send one request at each arrival of `level`; at most `max_concurrency` in flight."""
    offsets = level_offsets_ns(level)
    cap = asyncio.Semaphore(level.max_concurrency)

    async def admit_and_send(record: RequestRecord) -> None:
        if cap.locked():
            await cap.acquire()
            record.admitted_at = now_ns()
        else:
            await cap.acquire()
        try:
            if not io.stopped:
                await io.send(record)
        finally:
            cap.release()

    async def start(group: asyncio.TaskGroup) -> None:
        t0 = now_ns()
        for index, offset in enumerate(offsets):
            target = t0 + offset
            await sleep_until(target)
            if io.stopped:
                return
            record = RequestRecord.for_level(
                level.key, next(io.ids), index, target, warmup=level.warmup
            )
            group.create_task(admit_and_send(record))

    await in_task_group(start)
