"""What a level's scheduler works with: a `Backend` that sends, and the level's `LevelIO`.

Each kind's level decides when each of its requests is sent (`LevelSpec.run`); everything
else comes in a `LevelIO`: the backend that sends, the source of what to send, the sink
every ended record goes to, the stop event and the run's request ids. The consumer owns the
interface: `Backend` is defined here and `servecap.client` meets it, so no kind (and nothing
in `load`) imports the client.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from servecap.core.records import RequestRecord
from servecap.workload.source import AnyRequest, RequestSource

RecordSink = Callable[[RequestRecord], None]


class Backend(Protocol):
    """Sends one request and fills `record`; returns when the request has ended.

    It must not raise for server faults (they go into the record); it re-raises
    `asyncio.CancelledError` after marking the record cancelled. With `at_ns` it does what
    it can ahead (the body, a connection) and writes the request at `at_ns`, never before.
    """

    async def send(
        self, request: AnyRequest, record: RequestRecord, at_ns: int | None = None
    ) -> None: ...


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


async def in_task_group(body: Callable[[asyncio.TaskGroup], Awaitable[None]]) -> None:
    """Run `body`, which starts the level's tasks in a TaskGroup, so that one failing
    unexpectedly (a full disk in the sink) cancels and records the others; its error is
    re-raised as itself for the caller to handle."""
    try:
        async with asyncio.TaskGroup() as group:
            await body(group)
    except BaseExceptionGroup as errors:
        raise errors.exceptions[0] from None
