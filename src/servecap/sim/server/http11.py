"""HTTP/1.1 for the simulator: httptools parses, an asyncio Protocol moves the bytes.

Why not an ASGI server: an ASGI stream costs a task wake-up, an async generator step and a
``send`` message per chunk, which held the simulator to about 64 streams at 10 ms ITL on one
core (``bench/sim_capacity.py``). Here the engine loop writes every chunk of a step itself,
synchronously, through ``Responder.write_chunk``: one wake-up per engine step, not one per
stream.

Why httptools (llhttp, in C) and not h11: h11 took about 45 us of Python to parse a request
and write its response head, which at 1000 new streams a second is a tenth of the core the
chunks need. Responses are simple enough to write directly: a status line, a few headers,
then either a Content-Length body or a chunked one (``<hex length>\\r\\n<data>\\r\\n`` per
chunk, ``0\\r\\n\\r\\n`` at the end). An HTTP/1.0 client gets its stream close-delimited, as
chunked encoding is 1.1 only.

Bytes reach the socket through ``wire`` (a direct write while the kernel takes it whole, a
batch per engine step).

One request per connection is answered at a time; keep-alive is supported and pipelined
requests wait their turn. A request that cannot be parsed is answered (after those before it)
with a JSON error, and the connection closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import resource
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Protocol, cast

import httptools

from servecap.sim.server.wire import Wire, WriteBatch

MAX_BODY_BYTES = 16 * 1024 * 1024
MAX_HEAD_BYTES = 64 * 1024
SERVER_NAME = b"servecap-sim"
log = logging.getLogger(__name__)
_REASONS = {status.value: status.phrase.encode() for status in HTTPStatus}


@dataclass(frozen=True)
class HttpRequest:
    """One parsed request: method, path (query dropped) and the whole body."""

    method: str
    path: str
    body: bytes


class Handler(Protocol):
    """Answers a request through the responder (now or later)."""

    def __call__(self, request: HttpRequest, responder: Responder) -> None: ...


@dataclass(frozen=True)
class _Parsed:
    """A complete request waiting for its turn, with what its answer must respect."""

    request: HttpRequest
    keep_alive: bool
    http11: bool


class _Reject(Exception):
    """Raised inside a parser callback: answer ``status`` and close."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def response_head(status: int, headers: list[tuple[bytes, bytes]]) -> bytes:
    """The status line and headers of a response, ready to write."""
    lines = [b"HTTP/1.1 %d %b\r\n" % (status, _REASONS.get(status, b"Unknown"))]
    lines.append(b"server: %b\r\n" % SERVER_NAME)
    lines.extend(b"%b: %b\r\n" % header for header in headers)
    lines.append(b"\r\n")
    return b"".join(lines)


class Responder:
    """The answer to one request: a whole response, or a stream written over time.

    ``on_close`` runs once if the connection goes away before the answer is complete (the
    client left); handlers use it to cancel work."""

    __slots__ = ("_batch", "_chunked", "_conn", "done", "keep_alive", "on_close", "streaming")

    def __init__(self, conn: HttpConnection, keep_alive: bool, http11: bool) -> None:
        self._conn = conn
        self._batch = conn.batch
        self._chunked = http11  # an HTTP/1.0 client gets a close-delimited stream instead
        self.keep_alive = keep_alive
        self.streaming = False
        self.done = False
        self.on_close: Callable[[], None] | None = None

    def send(self, status: int, content_type: str, body: bytes) -> None:
        """A complete response with a Content-Length body (head and body in one write)."""
        if self.done:
            return
        self.done = True
        headers = [(b"content-type", content_type.encode()), (b"content-length", b"%d" % len(body))]
        self._conn.finish(self, response_head(status, self._connection(headers)) + body)

    def start_stream(self, status: int, content_type: str) -> None:
        """Send the head of a streamed response (server-sent events)."""
        headers = [(b"content-type", content_type.encode())]
        if self._chunked:
            headers.append((b"transfer-encoding", b"chunked"))
        else:
            self.keep_alive = False  # the end of the body is the end of the connection
        headers += [(b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no")]
        self._conn.write(response_head(status, self._connection(headers)))
        self.streaming = True

    def write_chunk(self, data: bytes) -> None:
        """One piece of the streamed body (synchronous: the socket, transport or batch
        takes it)."""
        self.write_framed(self.frame(data))

    def frame(self, data: bytes) -> bytes:
        """``data`` as a piece of this response's body goes on the wire (a chunk frame)."""
        return b"%x\r\n%b\r\n" % (len(data), data) if self._chunked else data

    def write_framed(self, framed: bytes) -> None:
        """Write what ``frame`` returned. The simulator's hottest call, once per stream per
        engine step (callers may cache framed pieces)."""
        wire = self._conn.wire
        if wire is None or self.done:
            return
        self._batch.write(wire, framed)

    def end_stream(self, last: bytes = b"") -> None:
        """End the streamed body, with ``last`` as its final piece (in the same write)."""
        if self.done:
            return
        self.done = True
        if self._chunked:
            last = (b"%x\r\n%b\r\n0\r\n\r\n" % (len(last), last)) if last else b"0\r\n\r\n"
        self._conn.finish(self, last)

    def _connection(self, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        return headers if self.keep_alive else [*headers, (b"connection", b"close")]


class HttpConnection(asyncio.Protocol):
    """One client connection: parses requests, answers them one at a time, in order."""

    __slots__ = (
        "_body",
        "_error",
        "_handler",
        "_head_bytes",
        "_in_head",
        "_parser",
        "_queue",
        "_reading",
        "_responder",
        "_url",
        "batch",
        "wire",
    )

    def __init__(self, handler: Handler, batch: WriteBatch) -> None:
        self._handler = handler
        self.batch = batch
        self._parser = httptools.HttpRequestParser(self)
        self.wire: Wire | None = None
        self._url = b""
        self._body = bytearray()
        self._in_head = False
        self._head_bytes = 0
        self._queue: deque[_Parsed] = deque()
        self._responder: Responder | None = None
        self._error: tuple[int, str] | None = None  # answered once the queue is done
        self._reading = True  # False after a parse error, an upgrade or the client's EOF

    # -- asyncio.Protocol --------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.wire = Wire(cast(asyncio.Transport, transport))  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        if self._reading:
            self._parse(data)
            self._next()

    def eof_received(self) -> bool | None:
        # a client may half-close after its request: keep the transport open for the answer;
        # the connection closes once the requests already received are answered
        self._reading = False
        self._next()
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        self.wire = None
        self._queue.clear()
        responder, self._responder = self._responder, None
        if responder is not None and not responder.done:
            responder.done = True
            if responder.on_close is not None:
                responder.on_close()

    # -- httptools callbacks -----------------------------------------------------------

    def on_message_begin(self) -> None:
        self._url, self._body = b"", bytearray()
        self._in_head, self._head_bytes = True, 0

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() == b"content-length" and value.isdigit() and int(value) > MAX_BODY_BYTES:
            raise _Reject(413, "request body too large")

    def on_headers_complete(self) -> None:
        self._in_head = False

    def on_body(self, body: bytes) -> None:
        self._body += body
        if len(self._body) > MAX_BODY_BYTES:  # a chunked body has no length up front
            raise _Reject(413, "request body too large")

    def on_message_complete(self) -> None:
        parser = self._parser
        path = self._url.decode("latin-1").split("?", 1)[0]
        request = HttpRequest(parser.get_method().decode("latin-1"), path, bytes(self._body))
        http11 = parser.get_http_version() == "1.1"
        self._queue.append(_Parsed(request, parser.should_keep_alive(), http11))
        self._body = bytearray()

    # -- used by Responder ------------------------------------------------------------

    def write(self, data: bytes) -> None:
        """Bytes to the socket, through the batch (no-op once the client is gone)."""
        if self.wire is not None:
            self.batch.write(self.wire, data)

    def finish(self, responder: Responder, pending: bytes) -> None:
        """Write the end of ``responder``'s answer, then close or go on to the next request."""
        self.write(pending)
        if responder is not self._responder:
            return
        self._responder = None
        if not responder.keep_alive:
            self._close()
        else:
            self._next()

    # -- internals ---------------------------------------------------------------------

    def _parse(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._reading = False  # no protocol switch here: answer what came, then close
        except httptools.HttpParserCallbackError as exc:
            reject = exc.__context__
            if not isinstance(reject, _Reject):
                raise
            self._fail(reject.status, str(reject))
        except httptools.HttpParserError as exc:
            self._fail(400, f"malformed request: {exc}")
        else:
            if self._in_head:
                self._head_bytes += len(data)
                if self._head_bytes > MAX_HEAD_BYTES:
                    self._fail(431, "request head too large")

    def _fail(self, status: int, message: str) -> None:
        self._reading = False
        self._error = (status, message)

    def _next(self) -> None:
        """Dispatch the next queued request if none is being answered; close when done."""
        while self._responder is None and self.wire is not None:
            if self._queue:
                self._dispatch(self._queue.popleft())
            elif self._error is not None:
                self._reject(*self._error)
            elif not self._reading:
                self._close()
            else:
                return

    def _dispatch(self, parsed: _Parsed) -> None:
        request = parsed.request
        responder = self._responder = Responder(self, parsed.keep_alive, parsed.http11)
        try:
            self._handler(request, responder)
        except Exception:  # a handler bug answers 500 and closes; the server goes on
            log.exception("simulator: handling %s %s failed", request.method, request.path)
            if not responder.streaming and not responder.done:
                responder.done = True
                self._responder = None
                self._reject(500, "internal error in the simulator")
            else:
                self._close()

    def _reject(self, status: int, message: str) -> None:
        """Answer with an OpenAI-style JSON error, then close the connection."""
        body = b'{"error":{"message":"%b","type":"invalid_request_error"}}' % (
            message.replace('"', "'").encode("latin-1", "replace")
        )
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        self.write(response_head(status, [*headers, (b"connection", b"close")]) + body)
        self._close()

    def _close(self) -> None:
        self._queue.clear()
        self._error = None
        wire, self.wire = self.wire, None
        if wire is not None:
            self.batch.close(wire)


async def start_http_server(
    handler: Handler, host: str, port: int, batch: WriteBatch | None = None
) -> asyncio.Server:
    """Listen on host:port (0: any free port) and serve each connection with ``handler``;
    writes go through ``batch`` (held while it is open)."""
    loop = asyncio.get_running_loop()
    shared = batch or WriteBatch()
    _raise_file_limit()
    return await loop.create_server(
        lambda: HttpConnection(handler, shared), host, port, backlog=4096
    )


def _raise_file_limit() -> None:
    """One open file per connection: a soft limit of 1024 (a common default) would refuse
    the 1025th stream, so the listener takes what the hard limit allows."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or soft < hard):
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        with contextlib.suppress(ValueError, OSError):  # a container may cap it lower
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
