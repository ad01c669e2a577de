"""Closed loop: c streams, each sends its next request when its last one ends.

This is the seed's model of c active users. Each request is scheduled at the moment its
stream becomes free, so `scheduled_at` and `sent_at` differ only by client overhead.
"""

from __future__ import annotations

import asyncio
import itertools

from servecap.core.clock import now_ns
from servecap.core.load_spec import ClosedLevel
from servecap.core.records import RequestRecord
from servecap.load.scheduler import LevelIO, in_task_group


async def run_closed_level(level: ClosedLevel, io: LevelIO) -> None:
    """Send `level.n_requests` over `level.concurrency` streams; each ended request is sunk."""
    remaining = itertools.count()

    async def stream(index: int) -> None:
        while next(remaining) < level.n_requests and not io.stopped:
            record = RequestRecord.for_level(
                level.key, next(io.ids), index, now_ns(), warmup=level.warmup
            )
            await io.send(record)

    async def start(group: asyncio.TaskGroup) -> None:
        for index in range(min(level.concurrency, level.n_requests)):
            group.create_task(stream(index))

    await in_task_group(start)
