"""Fixed schedule: each request is sent at a given target time (for deterministic tests).

Targets are absolute (`t0 + offset`), never relative sleeps, so a late wake-up delays one
send without shifting the rest; each record's `scheduled_at` is its target, so the gap to
`sent_at` is the client's lateness.
"""

from __future__ import annotations

import asyncio

from servecap.core.clock import now_ns
from servecap.core.load_spec import FixedLevel
from servecap.core.records import RequestRecord
from servecap.load.on_time import launch, until_lead
from servecap.load.scheduler import LevelIO, in_task_group


async def run_fixed_level(level: FixedLevel, io: LevelIO) -> None:
    """Send one request at each of `level.offsets_ns` after the level starts."""

    async def start(group: asyncio.TaskGroup) -> None:
        t0 = now_ns()
        for index, offset in enumerate(level.offsets_ns):
            target = t0 + offset
            request = io.source.next_request()
            await until_lead(target)
            if io.stopped:
                return
            record = RequestRecord.for_level(
                level.key, next(io.ids), index, target, warmup=level.warmup
            )
            await launch(group, io.send(record, request, target))

    await in_task_group(start)
