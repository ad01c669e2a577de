"""Sending on time: everything but the write is done before a request's target.

Every scheduler with target times (open loop, replay, fixed, a worker's planned share)
sends through `send_at_targets`, which builds a request before it waits, wakes
`SEND_LEAD_NS` before the target and starts the send then, giving the backend the target
(`at_ns`): the backend builds the body and takes or opens a connection ahead, and writes at
the target itself (`core.clock.sleep_until`, never early). So a request's send lateness
(`sent_at - scheduled_at`) holds only the write and the loop's wake-up, not the work a
client can do ahead.

Measured on the Azure replay (tests/replay, 456 rows, a quiet machine): building the next
row's prompt, then this one's body, connection and write after its target gave p50 0.63 ms
and p99 1.9 ms of lateness; the write alone is ~0.13 ms of it (loopback TCP delivers to the
server inside the sender's write call).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from typing import Any

from servecap.core.clock import now_ns
from servecap.core.records import RequestRecord
from servecap.kinds.base import LevelSpec
from servecap.kinds.io import LevelIO, in_task_group
from servecap.workload.source import AnyRequest

NS_PER_S = 1_000_000_000
# Ahead of the target: a connect (~0.5 ms on loopback, more under load) and a 32K-token
# body fit; a pooled connection is held idle at most this long before its request.
SEND_LEAD_NS = 5_000_000


async def until_lead(target_ns: int) -> None:
    """Sleep (coarsely: the backend waits the last stretch precisely) until `SEND_LEAD_NS`
    before `target_ns`."""
    wait = target_ns - SEND_LEAD_NS - now_ns()
    if wait > 0:
        await asyncio.sleep(wait / NS_PER_S)


async def launch(group: asyncio.TaskGroup, send: Coroutine[Any, Any, None]) -> None:
    """Start `send` in `group` and let it run to its first wait (its connection asked
    for) before the scheduler goes on to build the next request."""
    group.create_task(send)
    await asyncio.sleep(0)


Timed = Iterator[tuple[int, int, AnyRequest]]


async def send_at_targets(
    level: LevelSpec, io: LevelIO, timed: Timed, cap: int | None = None,
    start_ns: int | None = None,
) -> None:  # fmt: skip
    """Send each `(index, offset_ns, request)` of `timed` at `start_ns + offset_ns` (start:
    now), as row `index` of `level`, taking the next only once this one is on its way.

    With `cap`, at most that many are in flight: an arrival that finds them all taken waits,
    its record gets `admitted_at` when it gets in after its target, and that wait stays in
    `sent_at - scheduled_at`. A slot is taken as the send starts (`SEND_LEAD_NS` early)."""
    slots = asyncio.Semaphore(cap) if cap is not None else None

    async def send(record: RequestRecord, request: AnyRequest) -> None:
        if slots is None:
            await io.send(record, request, record.scheduled_at)
            return
        waited = slots.locked()
        async with slots:
            if waited and now_ns() > record.scheduled_at:
                record.admitted_at = now_ns()
            if not io.stopped:
                await io.send(record, request, record.scheduled_at)

    async def start(group: asyncio.TaskGroup) -> None:
        t0 = start_ns if start_ns is not None else now_ns()
        for index, offset, request in timed:  # each request built here, before its wait
            target = t0 + offset
            await until_lead(target)
            if io.stopped:
                return
            record = RequestRecord.for_level(
                level.key, next(io.ids), index, target, warmup=level.warmup
            )
            await launch(group, send(record, request))

    await in_task_group(start)
