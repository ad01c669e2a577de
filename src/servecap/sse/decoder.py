"""A sans-I/O server-sent-events decoder: bytes in, events out, no sockets.

Accepts LF, CRLF and lone CR line ends (also split across feeds), comment lines, multi-line
`data:` fields and UTF-8 split anywhere: lines are cut on bytes and decoded only once whole.
Line and event sizes are capped so a hostile server cannot make the client buffer without bound.

The common read (whole `data: ` events, one line each) is decoded by a fast path that
gives the same events (tests/property); anything else takes the general one.

Linear in the input: a line still incomplete at the end of a feed is kept as a list of
pieces and joined once, when its end arrives, so a long line delivered in many small reads
costs its length, not its length squared over the read size.
"""

from __future__ import annotations

from typing import NamedTuple

from servecap.core.errors import SSEProtocolError

# One OpenAI stream chunk carries a token or a few (with top-20 logprobs a few KiB, well under
# 64 KiB); 1 MiB leaves room for a server that sends a whole long answer or a large tool-call
# argument in one chunk, and still bounds what a hostile stream makes each of c streams hold.
DEFAULT_MAX_LINE_BYTES = 1024 * 1024


class SSEEvent(NamedTuple):
    """One dispatched event: its type (`message` unless set) and its data as text."""

    event: str
    data: str


class SSEDecoder:
    """Feed it raw bytes as they arrive; it returns the events those bytes completed."""

    __slots__ = (
        "_data", "_data_bytes", "_event", "_max_line", "_partial", "_partial_bytes",
        "_pending_cr", "replaced",
    )

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._partial: list[bytes] = []  # the pieces of a line whose end has not arrived
        self._partial_bytes = 0
        self.replaced = 0  # invalid UTF-8 sequences replaced with U+FFFD so far
        self._data: list[bytes] = []
        self._data_bytes = 0
        self._event = b""
        self._pending_cr = False
        self._max_line = max_line_bytes

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode `chunk`; returns the events it completed (possibly none)."""
        if not chunk:
            return []
        if (chunk.endswith(b"\n\n") and not (self._partial or self._data or self._event
                                             or self._pending_cr) and b"\r" not in chunk):
            if chunk.count(b"\n") == 2 and chunk.startswith(b"data: ") \
                    and len(chunk) - 2 <= self._max_line:
                try:  # the commonest read of all: one whole event, one line
                    return [SSEEvent("message", chunk[6:-2].decode("utf-8"))]
                except UnicodeDecodeError:
                    pass  # counted and replaced by the general path
            else:
                whole = self._whole_events(chunk)
                if whole is not None:
                    return whole
        if self._pending_cr:
            self._pending_cr = False
            if chunk.startswith(b"\n"):
                chunk = chunk[1:]
        if b"\r" in chunk:
            # A CR at the end may be the first half of a CRLF split across feeds.
            self._pending_cr = chunk.endswith(b"\r")
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        first_end = chunk.find(b"\n")
        if first_end < 0:
            self._keep_partial(chunk)
            return []
        if self._partial:
            self._keep_partial(chunk[:first_end])
            chunk = b"".join(self._partial) + chunk[first_end:]
            self._partial, self._partial_bytes = [], 0
        lines = chunk.split(b"\n")
        self._keep_partial(lines.pop())
        events: list[SSEEvent] = []
        for line in lines:
            if not line:
                self._dispatch(events)
            elif line[0] != 58:  # b":" starts a comment
                self._field(line)
        return events

    def _whole_events(self, chunk: bytes) -> list[SSEEvent] | None:
        """The common read, decoded without the line machinery: whole events of one
        `data: ` line each, nothing carried over. None when the chunk is anything else (a
        comment, a field, a multi-line event, an oversized line): the general path reads it."""
        blocks = chunk[:-2].split(b"\n\n")
        for block in blocks:
            if not block.startswith(b"data: ") or b"\n" in block or len(block) > self._max_line:
                return None
        return [SSEEvent("message", self._text(block[6:])) for block in blocks]

    def _keep_partial(self, piece: bytes) -> None:
        if not piece:
            return
        self._partial_bytes += len(piece)
        if self._partial_bytes > self._max_line:
            raise SSEProtocolError(f"SSE line longer than {self._max_line} bytes")
        self._partial.append(piece)

    def close(self) -> list[SSEEvent]:
        """End of stream: a final unterminated event is dispatched, as browsers do not, but
        servers that close without the blank line still meant it."""
        events: list[SSEEvent] = []
        if self._partial:
            self._field(b"".join(self._partial))
            self._partial, self._partial_bytes = [], 0
        self._dispatch(events)
        return events

    @property
    def buffered_bytes(self) -> int:
        return self._partial_bytes

    def _field(self, line: bytes) -> None:
        name, sep, value = line.partition(b":")
        if sep and value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            # Many short data lines make one event: bound the event, not only the line.
            self._data_bytes += len(value) + 1
            if self._data_bytes > self._max_line:
                raise SSEProtocolError(f"SSE event larger than {self._max_line} bytes")
            self._data.append(value)
        elif name == b"event":
            self._event = value

    def _dispatch(self, events: list[SSEEvent]) -> None:
        if self._data:
            data = self._text(b"\n".join(self._data))
            event = self._text(self._event) or "message"
            events.append(SSEEvent(event, data))
        self._data = []
        self._data_bytes = 0
        self._event = b""

    def _text(self, raw: bytes) -> str:
        """UTF-8 text, each invalid sequence replaced with U+FFFD and counted."""
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", errors="replace")
            self.replaced += text.count("\ufffd") - raw.count("\ufffd".encode())
            return text
