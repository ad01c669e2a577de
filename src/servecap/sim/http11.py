"""HTTP/1.1 for the simulator: h11 parses and frames, an asyncio Protocol moves the bytes.

Why not an ASGI server: an ASGI stream costs a task wake-up, an async generator step and a
``send`` message per chunk, which held the simulator to about 64 streams at 10 ms ITL on one
core (``bench/sim_capacity.py``). Here the engine loop writes every chunk of a step itself,
synchronously, through ``Responder.write_chunk``: one wake-up per engine step, not one per
stream.

h11 parses each request and writes the response head and the end of a chunked body. Chunk
frames are written directly (``<hex length>\\r\\n<data>\\r\\n``, exactly what h11 writes for a
``Data`` event) because h11's state machine costs 2.5 us a chunk and does not track chunked
body bytes. One request per connection at a time; keep-alive is supported, pipelined
requests wait their turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, cast

import h11

MAX_BODY_BYTES = 16 * 1024 * 1024
MAX_HEAD_BYTES = 64 * 1024
SERVER_NAME = "servecap-sim"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HttpRequest:
    """One parsed request: method, path (query dropped) and the whole body."""

    method: str
    path: str
    body: bytes


class Handler(Protocol):
    """Answers a request through the responder (now or later)."""

    def __call__(self, request: HttpRequest, responder: Responder) -> None: ...


class Responder:
    """The answer to one request: a whole response, or a chunked stream written over time.

    ``on_close`` runs once if the connection goes away before the answer is complete (the
    client left); handlers use it to cancel work."""

    def __init__(self, conn: HttpConnection) -> None:
        self._conn = conn
        self.streaming = False
        self.done = False
        self.on_close: Callable[[], None] | None = None

    def send(self, status: int, content_type: str, body: bytes) -> None:
        """A complete response with a Content-Length body."""
        headers = [("content-type", content_type), ("content-length", str(len(body)))]
        if not self.done:  # one write: head, body and end together
            self.done = True
            self._conn.finish_response(self._conn.head(status, headers) + self._conn.data(body))

    def start_stream(self, status: int, content_type: str) -> None:
        """Send the head of a chunked response (server-sent events)."""
        headers = [
            ("content-type", content_type),
            ("transfer-encoding", "chunked"),
            ("cache-control", "no-cache"),
            ("x-accel-buffering", "no"),
        ]
        self._conn.write_raw(self._conn.head(status, headers))
        self.streaming = True

    def write_chunk(self, data: bytes) -> None:
        """One chunk of the streamed body (synchronous: the transport buffers it)."""
        if not self.done:
            self._conn.write_raw(_frame(data))

    def end_stream(self, last: bytes = b"") -> None:
        """Close the chunked body, with ``last`` as its final chunk (in the same write)."""
        if not self.done:
            self.done = True
            self._conn.finish_response(_frame(last) if last else b"")


def _frame(data: bytes) -> bytes:
    """One chunk of a chunked body."""
    return b"%x\r\n%b\r\n" % (len(data), data)


class HttpConnection(asyncio.Protocol):
    """One client connection: feeds h11, dispatches each request to the handler."""

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self._h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD_BYTES)
        self._transport: asyncio.Transport | None = None
        self._request: h11.Request | None = None
        self._body = bytearray()
        self._responder: Responder | None = None
        self._processing = False

    # -- asyncio.Protocol --------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        self._h11.receive_data(data)
        self._process()

    def eof_received(self) -> bool | None:
        # a client may half-close after its request: keep the transport open for the answer
        # (h11 sees the EOF; the connection closes once the response is done)
        self._h11.receive_data(b"")
        self._process()
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None
        responder, self._responder = self._responder, None
        if responder is not None and not responder.done:
            responder.done = True
            if responder.on_close is not None:
                responder.on_close()

    # -- used by Responder ------------------------------------------------------------

    def head(self, status: int, headers: list[tuple[str, str]]) -> bytes:
        """The response line and headers, as bytes to write."""
        head = h11.Response(status_code=status, headers=[("server", SERVER_NAME), *headers])
        return self._h11.send(head) or b""

    def data(self, data: bytes) -> bytes:
        """Body bytes through h11 (it counts them against Content-Length)."""
        return self._h11.send(h11.Data(data=data)) or b""

    def write_raw(self, data: bytes) -> None:
        """Bytes straight to the socket (no-op once the client is gone)."""
        if self._transport is not None:
            self._transport.write(data)

    def finish_response(self, pending: bytes = b"") -> None:
        """Write ``pending`` and the end of the body in one go; keep the connection for the
        next request when both sides allow."""
        self.write_raw(pending + (self._h11.send(h11.EndOfMessage()) or b""))
        self._responder = None
        if self._h11.our_state is h11.MUST_CLOSE or self._h11.their_state in (
            h11.MUST_CLOSE,
            h11.CLOSED,
        ):
            self._close()
            return
        if self._h11.their_state is h11.DONE:
            self._h11.start_next_cycle()
            if not self._processing:  # else the running _process loop goes on by itself
                self._process()  # a pipelined request may already be buffered

    # -- internals ---------------------------------------------------------------------

    def _process(self) -> None:
        self._processing = True
        try:
            self._next_events()
        finally:
            self._processing = False

    def _next_events(self) -> None:
        while self._responder is None and self._transport is not None:
            try:
                event = self._h11.next_event()
            except h11.RemoteProtocolError as exc:
                self._reject(exc.error_status_hint, str(exc))
                return
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return
            if isinstance(event, h11.Request):
                self._request, self._body = event, bytearray()
            elif isinstance(event, h11.Data):
                self._body += event.data
                if len(self._body) > MAX_BODY_BYTES:
                    self._reject(413, "request body too large")
                    return
            elif isinstance(event, h11.EndOfMessage):
                self._dispatch()
            elif isinstance(event, h11.ConnectionClosed):
                self._close()
                return

    def _dispatch(self) -> None:
        assert self._request is not None
        target = self._request.target.decode("latin-1")
        request = HttpRequest(
            self._request.method.decode("latin-1"), target.split("?", 1)[0], bytes(self._body)
        )
        self._request, self._body = None, bytearray()
        responder = self._responder = Responder(self)
        try:
            self._handler(request, responder)
        except Exception:  # a handler bug answers 500 and closes; the server goes on
            log.exception("simulator: handling %s %s failed", request.method, request.path)
            if not responder.streaming and not responder.done:
                responder.done = True
                self._reject(500, "internal error in the simulator")
            else:
                self._close()

    def _reject(self, status: int, message: str) -> None:
        """Answer a request h11 could not parse, then close the connection."""
        body = b'{"error":{"message":"%s","type":"invalid_request_error"}}' % (
            message.replace('"', "'").encode("latin-1", "replace")
        )
        if self._h11.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            headers = [("content-type", "application/json"), ("content-length", str(len(body)))]
            headers.append(("connection", "close"))
            with contextlib.suppress(h11.LocalProtocolError):  # too late to answer: just close
                self.write_raw(self.head(status, headers) + self.data(body))
        self._close()

    def _close(self) -> None:
        if self._transport is not None:
            self._transport.close()


async def start_http_server(handler: Handler, host: str, port: int) -> asyncio.Server:
    """Listen on host:port (0: any free port) and serve each connection with ``handler``."""
    loop = asyncio.get_running_loop()
    return await loop.create_server(lambda: HttpConnection(handler), host, port, backlog=4096)
