"""Sending on time: everything but the write is done before a request's target.

Every scheduler with target times (open loop, replay, fixed, a worker's planned share)
builds a request before it waits, wakes `SEND_LEAD_NS` before the target and starts the
send then, giving the backend the target (`at_ns`): the backend builds the body and takes
or opens a connection ahead, and writes at the target itself (`core.clock.sleep_until`,
never early). So a request's send lateness (`sent_at - scheduled_at`) holds only the write
and the loop's wake-up, not the work a client can do ahead.

Measured on the Azure replay (tests/replay, 456 rows, a quiet machine): building the next
row's prompt, then this one's body, connection and write after its target gave p50 0.63 ms
and p99 1.9 ms of lateness; the write alone is ~0.13 ms of it (loopback TCP delivers to the
server inside the sender's write call).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from servecap.core.clock import now_ns

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
