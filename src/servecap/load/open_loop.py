"""Open loop: requests arrive at an offered rate, whether or not earlier ones have ended.

Target times come from `workload.arrivals` (`t0 + cumulative gaps`, seeded) and each
request is written at its absolute target (`load.on_time`), never after a gap from the last
send, so a late wake-up delays one request without shifting the rest. Each record's
`scheduled_at` is its target: `sent_at - scheduled_at` is the send lateness, and TTFT and
latency from `scheduled_at` are what a user arriving then would see (no coordinated
omission).

The cap on requests in flight (`max_concurrency`) is a semaphore taken as the send starts,
`SEND_LEAD_NS` before its target (a slot is held that much early): an arrival that finds it
full waits, its record gets `admitted_at` when it gets in after its target, and that wait
stays inside `sent_at - scheduled_at`.
"""

from __future__ import annotations

import asyncio

from servecap.core.clock import now_ns
from servecap.core.load_spec import OpenLevel
from servecap.core.records import RequestRecord
from servecap.load.on_time import NS_PER_S, launch, until_lead
from servecap.load.scheduler import LevelIO, in_task_group
from servecap.workload.arrivals import ArrivalProcess
from servecap.workload.source import AnyRequest


def level_offsets_ns(level: OpenLevel) -> list[int]:
    """The level's target send times, ns from its start (the arrivals' own contract)."""
    process = ArrivalProcess(level.arrival, level.rate, level.burstiness)  # type: ignore[arg-type]
    offsets = process.offsets(seed=level.seed, count=level.requests, duration=level.duration_s)
    return [round(float(t) * NS_PER_S) for t in offsets]


async def run_open_level(level: OpenLevel, io: LevelIO) -> None:
    """Send one request at each arrival of `level`; at most `max_concurrency` in flight."""
    offsets = level_offsets_ns(level)
    cap = asyncio.Semaphore(level.max_concurrency)

    async def admit_and_send(record: RequestRecord, request: AnyRequest) -> None:
        waited = cap.locked()
        await cap.acquire()
        if waited and now_ns() > record.scheduled_at:
            record.admitted_at = now_ns()
        try:
            if not io.stopped:
                await io.send(record, request, record.scheduled_at)
        finally:
            cap.release()

    async def start(group: asyncio.TaskGroup) -> None:
        t0 = now_ns()
        for index, offset in enumerate(offsets):
            target = t0 + offset
            request = io.source.next_request()  # built before its time, not inside it
            await until_lead(target)
            if io.stopped:
                return
            record = RequestRecord.for_level(
                level.key, next(io.ids), index, target, warmup=level.warmup
            )
            await launch(group, admit_and_send(record, request))

    await in_task_group(start)
