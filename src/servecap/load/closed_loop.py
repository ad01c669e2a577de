"""Closed loop: c streams, each sends its next request when its last one ends.

This is the seed's model of c active users. Each request is scheduled at the moment its
stream becomes free, so `scheduled_at` and `sent_at` differ only by client overhead.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator

from servecap.core.clock import now_ns
from servecap.core.records import RequestRecord
from servecap.load.backend import Backend
from servecap.workload.prompts import Prompt

RecordSink = Callable[[RequestRecord], None]


async def run_closed_loop(
    backend: Backend,
    prompts: Iterator[Prompt],
    concurrency: int,
    n_requests: int,
    ids: Iterator[int],
    sink: RecordSink,
    stop: asyncio.Event | None = None,
    warmup: bool = False,
) -> None:
    """Send `n_requests` over `concurrency` streams; every ended request goes to `sink`.

    `stop` ends scheduling early: streams finish the request in hand and send no more.
    Cancelling the task marks in-flight requests cancelled and still sinks them.
    """
    remaining = itertools.count()

    async def stream(index: int) -> None:
        while next(remaining) < n_requests and not (stop is not None and stop.is_set()):
            record = RequestRecord(
                request_id=next(ids),
                concurrency=concurrency,
                stream_index=index,
                scheduled_at=now_ns(),
                warmup=warmup,
            )
            try:
                await backend.send(next(prompts), record)
            finally:
                sink(record)

    # A TaskGroup, so that a stream failing unexpectedly (a full disk in the sink) cancels
    # and records the others; its error is re-raised as itself for the caller to handle.
    try:
        async with asyncio.TaskGroup() as group:
            for index in range(min(concurrency, n_requests)):
                group.create_task(stream(index))
    except BaseExceptionGroup as errors:
        raise errors.exceptions[0] from None
