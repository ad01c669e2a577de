"""A worker's share of a level with target times: send request i at `t0 + offset_i`.

The parent's one scheduler decides every target of an open-loop, fixed or replay level
(`load.shares`) and deals them out; a worker sends its own at the absolute times it was
given, from the start time all workers share (`start_ns`), so the schedule across workers
is the one a single process would keep. Each record keeps the level's key, its index in
the whole level and its target as `scheduled_at`. An open loop's cap on requests in flight
is split over the workers (`cap`), an arrival finding its worker's part full waits and
records `admitted_at`, as in one process.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from servecap.core.clock import now_ns
from servecap.core.load_spec import LevelSpec
from servecap.core.records import RequestRecord
from servecap.load.on_time import launch, until_lead
from servecap.load.scheduler import LevelIO, in_task_group
from servecap.workload.source import AnyRequest


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedLevel(LevelSpec):
    """Part of a level: `(index, offset_ns)` pairs; `replay` asks the source for row index."""

    targets: tuple[tuple[int, int], ...]
    cap: int | None = None
    replay: bool = False
    start_ns: int | None = None  # the start all workers share (this process's clock)


async def run_planned_level(level: PlannedLevel, io: LevelIO) -> None:
    """Send each of `level.targets` at its offset from the start; at most `cap` in flight."""
    cap = asyncio.Semaphore(level.cap) if level.cap is not None else None
    request_at = getattr(io.source, "request", None) if level.replay else None
    if level.replay and request_at is None:
        raise TypeError("a replay share needs a trace source (one with request(i))")

    async def send(record: RequestRecord, request: AnyRequest | None) -> None:
        if cap is None:
            await io.send(record, request, record.scheduled_at)
            return
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
        t0 = level.start_ns if level.start_ns is not None else now_ns()
        for index, offset in level.targets:
            target = t0 + offset
            # built before its time, not inside it (a source without rows: its next one)
            request = request_at(index) if request_at is not None else io.source.next_request()
            await until_lead(target)
            if io.stopped:
                return
            record = RequestRecord.for_level(
                level.key, next(io.ids), index, target, warmup=level.warmup
            )
            await launch(group, send(record, request))

    await in_task_group(start)
