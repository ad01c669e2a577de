"""A sans-I/O server-sent-events decoder: bytes in, events out, no sockets.

Accepts LF, CRLF and lone CR line ends (also split across feeds), comment lines, multi-line
`data:` fields and UTF-8 split anywhere: lines are cut on bytes and decoded only once whole.
Line and event sizes are capped so a hostile server cannot make the client buffer without bound.
"""

from __future__ import annotations

from typing import NamedTuple

from servecap.core.errors import SSEProtocolError

DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024


class SSEEvent(NamedTuple):
    """One dispatched event: its type (`message` unless set) and its data as text."""

    event: str
    data: str


class SSEDecoder:
    """Feed it raw bytes as they arrive; it returns the events those bytes completed."""

    __slots__ = ("_buffer", "_data", "_data_bytes", "_event", "_max_line", "_pending_cr")

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> None:
        self._buffer = b""
        self._data: list[bytes] = []
        self._data_bytes = 0
        self._event = b""
        self._pending_cr = False
        self._max_line = max_line_bytes

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Decode `chunk`; returns the events it completed (possibly none)."""
        if not chunk:
            return []
        if self._pending_cr:
            self._pending_cr = False
            if chunk.startswith(b"\n"):
                chunk = chunk[1:]
        if b"\r" in chunk:
            # A CR at the end may be the first half of a CRLF split across feeds.
            self._pending_cr = chunk.endswith(b"\r")
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        buffer = self._buffer + chunk if self._buffer else chunk
        lines = buffer.split(b"\n")
        self._buffer = lines.pop()
        if len(self._buffer) > self._max_line:
            raise SSEProtocolError(f"SSE line longer than {self._max_line} bytes")
        events: list[SSEEvent] = []
        for line in lines:
            if not line:
                self._dispatch(events)
            elif line[0] != 58:  # b":" starts a comment
                self._field(line)
        return events

    def close(self) -> list[SSEEvent]:
        """End of stream: a final unterminated event is dispatched, as browsers do not, but
        servers that close without the blank line still meant it."""
        events: list[SSEEvent] = []
        if self._buffer:
            self._field(self._buffer)
            self._buffer = b""
        self._dispatch(events)
        return events

    @property
    def buffered_bytes(self) -> int:
        return len(self._buffer)

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
            data = b"\n".join(self._data).decode("utf-8", errors="replace")
            event = self._event.decode("utf-8", errors="replace") or "message"
            events.append(SSEEvent(event, data))
        self._data = []
        self._data_bytes = 0
        self._event = b""
