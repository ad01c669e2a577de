"""Connection pools that never hand out a connection the server has already closed.

`StreamPool` holds the streaming client's own keep-alive connections (`client.wire`), one
per stream; `FreshConnector` is aiohttp's, for the preflight's and scraper's plain requests,
and owns the stream pool so that closing the session closes both.

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

import asyncio
import contextvars
import select
import socket
import ssl
from typing import Any

import aiohttp

from servecap.client.wire import Connection
from servecap.core.clock import now_ns

# a guard only: each stale connection is closed as it is found, so the loop ends when the
# pool is empty; this bounds it even if a poll misbehaved
MAX_SKIPPED = 1024
# How long the first released connections rest before reuse, until the origin is known: a
# server that closes after each response (llama-server, whose close follows its last chunk
# by well under a millisecond on loopback) has then closed it, and the poll sees it.
PROBATION_S = 0.02


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


class ConnectFailed(Exception):
    """A new connection could not be opened: nothing was written (`reason` says why)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


def connect_reason(exc: BaseException) -> str:
    """The failure reason of an exception raised while connecting (TCP, then TLS)."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        return "tls_verify_failed"
    if isinstance(exc, ssl.SSLError):
        # a certificate the client refused, or no TLS at all (https to a plain HTTP port)
        return "tls_handshake_failed"
    if isinstance(exc, socket.gaierror):
        return "dns_error"
    if isinstance(exc, ConnectionRefusedError):
        return "connect_refused"
    return "connect_error"


class StreamPool:
    """Keep-alive connections to one origin for the streaming client, no cap: the load
    already bounds the requests in flight, and each holds one connection."""

    def __init__(
        self, host: str, port: int, tls: ssl.SSLContext | None, connect_timeout_s: float
    ) -> None:
        self._host, self._port, self._tls = host, port, tls
        self._connect_timeout_s = connect_timeout_s
        self._idle: list[Connection] = []
        self._open: set[Connection] = set()
        # Whether this origin keeps a connection open after a response: unknown (None) until
        # the first reuse, which waits PROBATION_S so that a close sent just after the
        # response has reached the socket before it is polled.
        self._keeps_alive: bool | None = None

    async def acquire(self, skips: SkipCount) -> Connection:
        """A connection that was open a moment ago, or a new one (`ConnectFailed`)."""
        idle = self._idle
        for _ in range(MAX_SKIPPED):
            if not idle:
                break
            connection = idle.pop()  # the most recently used: warm, least likely closed
            if connection.closed:
                continue  # the loop saw its close: never a candidate
            if peer_closed(connection):
                connection.close()  # never written to: closing it loses nothing
                skips.skipped += 1
                continue
            return connection
        return await self._connect()

    def release(self, connection: Connection) -> None:
        if self._keeps_alive is None and PROBATION_S > 0:
            # Until the origin is known, a released connection rests PROBATION_S before it
            # can be reused (requests meanwhile open new ones, outside the send gap).
            asyncio.get_running_loop().call_later(PROBATION_S, self._probe, connection)
        elif self._keeps_alive is not False:
            self._idle.append(connection)
        else:
            connection.close()  # the server would close it a moment later anyway

    def _probe(self, connection: Connection) -> None:
        """The first rested connection decides: a server that closed it right after its
        response (llama-server says Keep-Alive and does) gets a new connection per request."""
        closed = connection.closed or peer_closed(connection)
        if self._keeps_alive is None:
            self._keeps_alive = not closed
        if closed:
            connection.close()
        else:
            self.release(connection)

    def forget(self, connection: Connection) -> None:
        self._open.discard(connection)

    def close(self) -> None:
        for connection in list(self._open):
            connection.close()
        self._open.clear()
        self._idle.clear()

    async def _connect(self) -> Connection:
        loop = asyncio.get_running_loop()
        started = now_ns()
        try:
            async with asyncio.timeout(self._connect_timeout_s):
                _, connection = await loop.create_connection(
                    lambda: Connection(self), self._host, self._port, ssl=self._tls,
                    server_hostname=self._host if self._tls is not None else None,
                )
        except TimeoutError:
            raise ConnectFailed(
                "connect_error", f"connect timed out after {self._connect_timeout_s:g} s"
            ) from None
        except OSError as exc:  # ssl.SSLError is one
            text = str(exc).strip()
            detail = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
            raise ConnectFailed(connect_reason(exc), detail[:300]) from None
        self._open.add(connection)
        connection.connect_ns = now_ns() - started
        return connection


class FreshConnector(aiohttp.TCPConnector):
    """TCPConnector whose pooled connections are checked for EOF before they are reused;
    it owns the session's `StreamPool` (set by `client.http`) and closes it with its own."""

    streams: StreamPool | None = None

    def _close(self, *args: Any, **kwargs: Any) -> Any:
        if self.streams is not None:
            self.streams.close()
        return super()._close(*args, **kwargs)

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
