"""One HTTP/1.1 connection of the streaming client: an asyncio Protocol, parsed by httptools.

Why not aiohttp for the streams (bench/client_overhead.py measured both): aiohttp hands each
read to the request's task through a StreamReader, so a chunk is stamped when that task
resumes, after the other streams' chunks of the same loop turn were parsed; and it builds
and writes a request in tasks of its own, so in a closed loop's burst (all c streams end
and resubmit at once) a due request waited inside the client behind the others' endings.
Here `data_received` stamps the bytes the moment the loop reads them and parses them in
the same call (no task wake-up per chunk), and `write` hands the request to the socket at
once, so `sent_at` is when it goes to the kernel.

httptools (llhttp, in C) parses the status line, headers and chunked framing, as in the
simulator (`sim/http11.py`). Everything that is about the request's meaning (status,
content type, SSE, the record) is the `Exchange`'s, not this module's.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

import httptools

from servecap.core.clock import now_ns

NS_PER_S = 1_000_000_000
# headers the exchange reads; every other header is skipped while parsing
WANTED = frozenset({
    b"content-type", b"content-encoding", b"content-length", b"transfer-encoding",
    b"location", b"retry-after",
})


class Listener(Protocol):
    """What a connection reports about the response in flight (`client.exchange.Exchange`)."""

    def head(self, status: int, headers: dict[bytes, bytes], at: int) -> None: ...

    def body(self, data: bytes, at: int) -> None: ...

    def end(self, at: int) -> None: ...

    def lost(self, detail: str, at: int, clean_eof: bool) -> None: ...

    def stalled(self, at: int) -> None: ...

    def sent(self, at: int) -> None: ...

    @property
    def finished(self) -> bool: ...


class Owner(Protocol):
    """The pool a connection returns to when reusable and leaves when closed."""

    def release(self, connection: Connection) -> None: ...

    def forget(self, connection: Connection) -> None: ...


class Connection(asyncio.Protocol):
    """A keep-alive connection carrying one exchange at a time."""

    def __init__(self, owner: Owner) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.connect_ns: int | None = None  # how long opening it took, until first used
        self._owner = owner
        self._listener: Listener | None = None
        self._parser: httptools.HttpResponseParser | None = None
        self._headers: dict[bytes, bytes] = {}
        self._at = 0  # the stamp of the bytes being parsed
        self._last_rx = 0
        self._stall_ns = 0
        self._stall: asyncio.TimerHandle | None = None
        self._draining = False
        self._complete = False
        self._keep_alive = False
        self._informational = False

    # -- asyncio.Protocol ------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's is not a subclass
        assert self.transport is not None
        # resume_writing when the buffer is empty again: the moment a request too large for
        # the socket's buffer has its last byte with the kernel
        self.transport.set_write_buffer_limits(high=0, low=0)

    def data_received(self, data: bytes) -> None:
        self._at = self._last_rx = now_ns()  # stamped before any parsing
        parser = self._parser
        if parser is None or self._listener is None:
            self.close()  # bytes nobody asked for: the connection cannot be trusted
            return
        try:
            parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._listener.lost(f"invalid HTTP response: {exc}", self._at, False)
            self.close()
            return
        if self._listener is not None and self._listener.finished:
            self._done(reusable=self._complete and self._keep_alive)

    def eof_received(self) -> bool:
        self._lost("server closed the connection", clean=True)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        detail = f"{type(exc).__name__}: {exc}" if exc else "server closed the connection"
        self._lost(detail, clean=exc is None)

    def pause_writing(self) -> None:
        pass  # TLS transports pause with nothing buffered: the buffer's size is what counts

    def resume_writing(self) -> None:
        if self._draining and self._listener is not None:
            self._listener.sent(now_ns())  # the rest of the request is with the kernel now
        self._draining = False

    # -- httptools callbacks -----------------------------------------------------------

    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name in WANTED:
            self._headers[name] = value

    def on_headers_complete(self) -> None:
        assert self._parser is not None and self._listener is not None
        status = self._parser.get_status_code()
        if 100 <= status < 200:  # an interim response: the real one follows
            self._informational = True
            self._headers = {}
            return
        # asked here: once the message is complete the parser has reset for the next one
        self._keep_alive = self._parser.should_keep_alive()
        self._listener.head(status, self._headers, self._at)

    def on_body(self, body: bytes) -> None:
        if self._listener is not None and not self._listener.finished:
            self._listener.body(body, self._at)

    def on_message_complete(self) -> None:
        if self._informational:
            self._informational = False
            return
        self._complete = True
        if self._listener is not None and not self._listener.finished:
            self._listener.end(self._at)

    # -- the client's side ---------------------------------------------------------------

    def start(self, request: bytes, listener: Listener, stall_s: float) -> None:
        """Write `request` and report its response to `listener`; stamps `sent` as the
        request goes to the kernel (again once the rest drains, if the socket's buffer was
        full)."""
        assert self.transport is not None
        self._listener = listener
        self._parser = httptools.HttpResponseParser(self)
        self._headers = {}
        self._complete = self._informational = self._keep_alive = False
        self._last_rx = now_ns()
        self._stall_ns = round(stall_s * NS_PER_S)
        # Stamped before the write, not after it: the write wakes the server, which on a
        # shared machine may run first and leave this process waiting until the answer is
        # done (docs/validation/vllm-live.md); no wake-up sits between this stamp and the send.
        listener.sent(now_ns())
        self.transport.write(request)
        # a socket buffer too full for the whole request: sent when the rest drains
        self._draining = self.transport.get_write_buffer_size() > 0
        self._stall = asyncio.get_running_loop().call_later(stall_s, self._check_stall)

    @property
    def socket(self) -> Any:
        """The socket under the transport (plain or TLS), for its kernel clock; or None."""
        return None if self.transport is None else self.transport.get_extra_info("socket")

    @property
    def head_chunked(self) -> bool:
        """The response declared its length or chunking (else EOF ends its body)."""
        return b"content-length" in self._headers or b"transfer-encoding" in self._headers

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._owner.forget(self)
        self._cancel_stall()
        self._listener = None
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def abort(self) -> None:
        """End the exchange now (a timeout, a cancelled request): nothing is reused."""
        self._listener = None
        self.close()

    def _done(self, reusable: bool) -> None:
        self._cancel_stall()
        self._listener = None
        self._parser = None
        if reusable and not self.closed:
            self._owner.release(self)
        else:
            self.close()

    def _lost(self, detail: str, clean: bool) -> None:
        listener = self._listener
        if listener is not None and not listener.finished:
            # a body without length or chunking ends at EOF, as HTTP/1.1 says
            eof_ends_body = clean and not self.head_chunked
            listener.lost(detail, now_ns(), eof_ends_body)
        self.close()

    def _check_stall(self) -> None:
        self._stall = None
        listener = self._listener
        if listener is None or listener.finished:
            return
        idle_ns = now_ns() - self._last_rx
        if idle_ns >= self._stall_ns:
            listener.stalled(now_ns())
            self.abort()
            return
        # data came meanwhile: check again when the stall bound from its arrival is up
        loop = asyncio.get_running_loop()
        self._stall = loop.call_later((self._stall_ns - idle_ns) / NS_PER_S, self._check_stall)

    def _cancel_stall(self) -> None:
        if self._stall is not None:
            self._stall.cancel()
            self._stall = None
