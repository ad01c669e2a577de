"""The interface a load scheduler needs from whatever sends requests."""

from __future__ import annotations

from typing import Protocol

from servecap.core.records import RequestRecord
from servecap.workload.source import AnyRequest


class Backend(Protocol):
    """Sends one request and fills `record`; returns when the request has ended.

    It must not raise for server faults (they go into the record); it re-raises
    `asyncio.CancelledError` after marking the record cancelled. With `at_ns` it does what
    it can ahead (the body, a connection) and writes the request at `at_ns`, never before.
    """

    async def send(
        self, request: AnyRequest, record: RequestRecord, at_ns: int | None = None
    ) -> None: ...
