"""One request's response, as its connection reports it: status, body, end or loss.

Runs inside the connection's `data_received` (no task per chunk): it checks the response
head (a redirect, an error status and a wrong content type each end the request with their
reason and the first bytes of the body as detail), decodes a stream's SSE events into the
record through `ChunkReader`, caps its size, and resolves `done` once the request ended, by
whatever path. Every stamp it writes is the arrival of the bytes that caused it.
"""

from __future__ import annotations

import asyncio
import zlib
from typing import Any

from servecap.client.chunks import ChunkReader
from servecap.client.failures import fail, reason_for_status, timeout_reason
from servecap.client.stamp_age import received_age_ms
from servecap.core.errors import SSEProtocolError
from servecap.core.urls import hide_userinfo
from servecap.sse.decoder import SSEDecoder

MAX_RESPONSE_BYTES = 64 * 1024 * 1024
ERROR_BODY_BYTES = 2048  # of an error status's body, kept as the row's detail
SNIPPET_BYTES = 512  # of a body that is not an event stream
_INFLATE = {b"gzip": 31, b"x-gzip": 31, b"deflate": 47}  # zlib wbits (47: zlib or gzip)


class Exchange:
    """Fills `reader.record` from one response; `done` resolves when the request ended."""

    __slots__ = (
        "_decoder", "_detail", "_first_age", "_inflate", "_kept", "_limit", "_reason",
        "_received", "done", "finished", "reader", "record", "sock",
    )

    def __init__(self, reader: ChunkReader, done: asyncio.Future[None], sock: Any) -> None:
        self.reader = reader
        self.record = reader.record
        self.done = done
        self.sock = sock  # for the kernel's receive clock (client.stamp_age)
        self.finished = False
        self._decoder: SSEDecoder | None = None
        self._inflate: Any = None
        self._received = 0
        self._first_age: float | None = None
        self._kept = bytearray()  # an error body's first bytes
        self._limit = 0
        self._reason = ""
        self._detail = ""

    def sent(self, at: int) -> None:
        self.record.sent_at = at

    def head(self, status: int, headers: dict[bytes, bytes], at: int) -> None:
        record = self.record
        if record.first_byte_at is None:
            record.first_byte_at = at
        record.http_status = status
        if 300 <= status < 400:
            location = headers.get(b"location", b"").decode("latin-1")
            target = hide_userinfo(location[:200])
            self._fail(reason_for_status(status), f"HTTP {status} to {target!r}: not followed")
            return
        if status >= 400:
            retry = headers.get(b"retry-after", b"").decode("latin-1")
            self._collect(reason_for_status(status), f"Retry-After: {retry[:40]}; " if retry
                          else "", ERROR_BODY_BYTES)
            return
        content_type = headers.get(b"content-type", b"").decode("latin-1")
        if "text/event-stream" not in content_type:
            self._collect("unexpected_content_type", f"{content_type[:80]}: ", SNIPPET_BYTES)
            return
        encoding = headers.get(b"content-encoding", b"identity").strip().lower()
        if encoding not in (b"identity", b""):
            if encoding not in _INFLATE:
                self._fail("client_error", f"unsupported Content-Encoding {encoding[:40]!r}")
                return
            self._inflate = zlib.decompressobj(_INFLATE[encoding])
        self._decoder = SSEDecoder()

    def body(self, data: bytes, at: int) -> None:
        decoder = self._decoder
        if decoder is None:
            self._keep(data)
            return
        self._received += len(data)
        if self._received > MAX_RESPONSE_BYTES:
            self._fail("response_too_large", f"over {MAX_RESPONSE_BYTES} bytes")
            return
        record = self.record
        before = record.first_token_at
        try:
            if self._inflate is not None:
                data = self._inflate.decompress(data)
            for event, text in decoder.feed(data):
                self.reader.feed(event, text, at)
        except SSEProtocolError as exc:
            self._fail("response_too_large", str(exc))
            return
        except zlib.error as exc:
            self._fail("malformed_sse", f"cannot decompress the stream: {exc}")
            return
        if before is None and record.first_token_at is not None:
            # one syscall a request: how old the first token's bytes were when stamped
            self._first_age = received_age_ms(self.sock)
        if record.status != "ok":
            self._finish()  # a malformed or error event: the first reason stands

    def end(self, at: int) -> None:
        """The response is complete (its length, its last chunk, or EOF where neither)."""
        decoder = self._decoder
        if decoder is None:  # an error body, whole and under its limit
            self._fail(self._reason or "client_error", self._detail + self._text())
            return
        for event, text in decoder.close():
            self.reader.feed(event, text, at)
        self.record.ended_at = at
        ages = [a for a in (self._first_age, received_age_ms(self.sock)) if a is not None]
        if ages:
            # the larger read-stamp age bounds the client's share of TTFT and of latency
            self.record.client_delay_ms = max(ages)
        self._finish()

    def lost(self, detail: str, at: int, clean_eof: bool) -> None:
        if clean_eof and self.record.http_status is not None:
            self.end(at)
            return
        if self._reason:  # an error body cut short: its status is the reason
            self._fail(self._reason, self._detail + self._text())
        responded = self.record.first_byte_at is not None
        # written, then the connection ended: before any response byte the server hung up
        self._fail("stream_truncated" if responded else "server_disconnected", detail)
        self.record.ended_at = at

    def stalled(self, at: int) -> None:
        self._fail(timeout_reason(self.record.first_byte_at is not None), "read timed out")
        self.record.ended_at = at

    def _collect(self, reason: str, prefix: str, limit: int) -> None:
        """Keep the body's first `limit` bytes, then fail with `reason` (an error status)."""
        self._reason, self._detail, self._limit = reason, prefix, limit

    def _keep(self, data: bytes) -> None:
        self._kept += data[: self._limit - len(self._kept)]
        if len(self._kept) >= self._limit:
            self._fail(self._reason, self._detail + self._text())

    def _text(self) -> str:
        return self._kept.decode("utf-8", errors="replace")

    def _fail(self, reason: str, detail: str) -> None:
        fail(self.record, reason, detail)
        self._finish()

    def _finish(self) -> None:
        if self.finished:
            return
        self.finished = True
        if self._decoder is not None:
            self.record.utf8_replaced = self._decoder.replaced
        if not self.done.done():
            self.done.set_result(None)
