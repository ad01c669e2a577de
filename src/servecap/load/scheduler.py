"""The scheduler seam: one coroutine per load kind runs one level.

A scheduler decides when each request of a level is sent; everything else comes in a
`LevelIO`: the backend that sends, the source of what to send, the sink every ended record
goes to, the stop event and the run's request ids. Schedulers are registered by kind in
`load.schedulers.SCHEDULERS`, a plain dict.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from servecap.core.records import RequestRecord
from servecap.load.backend import Backend
from servecap.workload.source import AnyRequest, RequestSource

RecordSink = Callable[[RequestRecord], None]


@dataclass(frozen=True, slots=True)
class LevelIO:
    """What a scheduler works with while it runs one level."""

    backend: Backend
    source: RequestSource
    sink: RecordSink
    ids: Iterator[int]
    stop: asyncio.Event | None = None
    # a worker process's part of a sessions level: (k, N) runs the users with u % N == k
    part: tuple[int, int] | None = None

    @property
    def stopped(self) -> bool:
        return self.stop is not None and self.stop.is_set()

    def runs_user(self, user: int) -> bool:
        """Whether this process runs virtual user `user` (all of them without a part)."""
        return self.part is None or user % self.part[1] == self.part[0]

    async def send(
        self, record: RequestRecord, request: AnyRequest | None = None, at_ns: int | None = None
    ) -> None:
        """Send `request` (default: the source's next) as `record`, written at `at_ns` when
        given (`load.on_time`); the record is sunk however it ends, holding the lengths it
        asked for."""
        request = request if request is not None else self.source.next_request()
        record.input_tokens_sent = request.input_tokens
        record.max_tokens_sent = request.max_tokens
        try:
            await self.backend.send(request, record, at_ns)
        finally:
            self.sink(record)


class Scheduler(Protocol):
    """Runs one level (a `LevelSpec` of the scheduler's kind) and returns when it ended.

    `stop` ends scheduling early: requests in flight finish, no more are sent. Cancelling
    the task marks in-flight requests cancelled and still sinks them.
    """

    async def __call__(self, level: Any, io: LevelIO) -> None: ...


async def in_task_group(body: Callable[[asyncio.TaskGroup], Awaitable[None]]) -> None:
    """Run `body`, which starts the level's tasks in a TaskGroup, so that one failing
    unexpectedly (a full disk in the sink) cancels and records the others; its error is
    re-raised as itself for the caller to handle."""
    try:
        async with asyncio.TaskGroup() as group:
            await body(group)
    except BaseExceptionGroup as errors:
        raise errors.exceptions[0] from None
