"""A connection pool that never hands out a connection the server has already closed.

Some servers (llama-server) advertise keep-alive yet close after each stream. aiohttp drops a
pooled connection only once its event loop has processed the close; until then the next
request would be written to a dead socket and fail, and the client could not tell that from
a server that read the request and then hung up (a server fault). So before a pooled
connection is reused its socket is polled, without blocking, as mature HTTP clients do: an
idle keep-alive socket that is readable holds either EOF or bytes nobody asked for, and is
closed instead. A request is therefore written only to a socket that was open a moment
before, and a failure after writing is final: it is never sent again (DESIGN: never retried
silently). Each connection skipped this way counts in the request's `reconnects`.
"""

from __future__ import annotations

import contextvars
import select
from typing import Any

import aiohttp

# a guard only: each stale connection is closed as it is found, so the loop ends when the
# pool is empty; this bounds it even if a poll misbehaved
MAX_SKIPPED = 1024


class SkipCount:
    """Per request: how many stale pooled connections were closed before it was written."""

    __slots__ = ("skipped",)

    def __init__(self) -> None:
        self.skipped = 0


# Set by the request's task around its exchange; the pool runs inside that task.
current_skips: contextvars.ContextVar[SkipCount | None] = contextvars.ContextVar(
    "servecap_skips", default=None
)


def peer_closed(protocol: Any) -> bool:
    """True when an idle pooled connection's socket is readable, hung up or in error."""
    transport = getattr(protocol, "transport", None)
    if transport is None or transport.is_closing():
        return True
    sock = transport.get_extra_info("socket")
    if sock is None:
        return False  # nothing to poll (a test transport); aiohttp's own check stands
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN | select.POLLPRI | select.POLLRDHUP)
    return bool(poller.poll(0))


class FreshConnector(aiohttp.TCPConnector):
    """TCPConnector whose pooled connections are checked for EOF before they are reused."""

    async def _get(self, *args: Any, **kwargs: Any) -> Any:
        for _ in range(MAX_SKIPPED):
            connection = await super()._get(*args, **kwargs)
            if connection is None or not peer_closed(connection.protocol):
                return connection
            connection.close()  # never written to: closing it loses nothing
            counter = current_skips.get()
            if counter is not None:
                counter.skipped += 1
        return None  # the pool is full of dead connections: open a new one
