"""Trace replay: row i of the trace is sent at `t0 + offset_i / speed`.

Targets are absolute, as in the fixed schedule, so a late wake-up delays one send and
never shifts the rest; each record's `scheduled_at` is its row's target, so `sent_at -
scheduled_at` is how late the client replayed that row (the report's send lateness). The
offsets come from the source's rows (`PlannedRequest.offset_s`, a `TraceSource`), each
level replaying the same rows from row 0; the next row is built while the client waits for
its time, never on the send path.
"""

from __future__ import annotations

import asyncio

from servecap.core.clock import now_ns
from servecap.core.load_spec import ReplayLevel
from servecap.core.records import RequestRecord
from servecap.load.on_time import launch, until_lead
from servecap.load.scheduler import LevelIO, in_task_group


async def run_replay_level(level: ReplayLevel, io: LevelIO) -> None:
    """Send the trace's rows at their offsets divided by `level.speed`."""
    request_at = getattr(io.source, "request", None)
    if request_at is None:
        raise TypeError("a replay level needs a trace source (one with request(i))")
    size = getattr(io.source, "size", None)
    rows = level.n_requests if size is None else min(level.n_requests, size)

    async def start(group: asyncio.TaskGroup) -> None:
        t0 = now_ns()
        for index in range(rows):
            request = request_at(index)
            target = t0 + round((request.offset_s or 0.0) * 1e9 / level.speed)
            await until_lead(target)
            if io.stopped:
                return
            record = RequestRecord.for_level(
                level.key, next(io.ids), index, target, warmup=level.warmup
            )
            await launch(group, io.send(record, request, target))

    await in_task_group(start)
