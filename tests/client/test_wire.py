"""The streams' own HTTP/1.1 client (client.wire): what it writes, how it reads bodies of
every framing, and where its stamps sit. Raw socket servers on 127.0.0.1, one thread a
connection, so each test controls every byte and when it is sent."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from servecap.client.http import StreamingClient, make_session
from servecap.core.config import ClientOptions
from servecap.core.errors import UserInputError
from servecap.core.records import RequestRecord
from servecap.workload.source import builtin_source
from tests.faults.tls import server_context

SSE = (
    b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n'
    b'data: {"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"stop"}]}\n\n'
    b'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}\n\n'
    b"data: [DONE]\n\n"
)
Handler = Callable[[socket.socket], None]


def read_request(conn: socket.socket) -> tuple[bytes, bytes]:
    """The head and body of one request (Content-Length framed)."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        body += conn.recv(65536)
    return head, body


@contextmanager
def raw_server(handler: Handler) -> Iterator[tuple[int, list[int]]]:
    """Serve `handler` on 127.0.0.1 (a thread per connection); yields the port and the
    count of connections accepted (a list, to be read after)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    accepted: list[int] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            accepted.append(1)
            threading.Thread(target=_guarded, args=(handler, conn), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], accepted
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def _guarded(handler: Handler, conn: socket.socket) -> None:
    with conn, suppress(OSError):
        handler(conn)


async def _send(options: ClientOptions, headers: dict[str, str] | None = None,
                times: int = 1) -> list[RequestRecord]:
    records = []
    async with make_session(options, 1, headers or {}) as session:
        client = StreamingClient(session, options, "m", "chat", 2)
        for i in range(times):
            record = RequestRecord(i, 1, 0, time.perf_counter_ns())
            await client.send(builtin_source(8, 1).next_request(), record)
            records.append(record)
    return records


def _options(port: int, scheme: str = "http", **kw: object) -> ClientOptions:
    return ClientOptions(base_url=f"{scheme}://127.0.0.1:{port}/v1", timeout_s=10, **kw)


def _chunked(*parts: bytes) -> bytes:
    return b"".join(b"%x\r\n%b\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"


async def test_the_request_carries_the_sessions_headers_and_its_json_body() -> None:
    seen: list[tuple[bytes, bytes]] = []

    def handler(conn: socket.socket) -> None:
        seen.append(read_request(conn))
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n" + _chunked(SSE))

    with raw_server(handler) as (port, _):
        (record,) = await _send(_options(port), {"Authorization": "Bearer k", "X-Team": "a"})
    assert (record.status, record.completion_tokens, record.http_status) == ("ok", 2, 200)
    head, body = seen[0]
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /v1/chat/completions HTTP/1.1"
    assert f"Host: 127.0.0.1:{port}" in lines
    assert "Authorization: Bearer k" in lines and "X-Team: a" in lines
    sent = json.loads(body)
    assert sent["stream"] is True and sent["model"] == "m" and sent["messages"]


async def test_a_header_holding_a_line_break_is_refused() -> None:
    with pytest.raises(UserInputError, match="line break"):
        await _send(_options(9), {"X-Bad": "a\r\nInjected: 1"})


async def test_a_body_ended_by_close_is_read_whole_and_the_connection_not_reused() -> None:
    def handler(conn: socket.socket) -> None:
        read_request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     b"Connection: close\r\n\r\n" + SSE)

    with raw_server(handler) as (port, accepted):
        records = await _send(_options(port), times=2)
    assert [(r.status, r.completion_tokens) for r in records] == [("ok", 2)] * 2
    assert len(accepted) == 2 and records[1].reconnects == 0


async def test_a_gzipped_stream_and_an_interim_100_are_read_through() -> None:
    def handler(conn: socket.socket) -> None:
        read_request(conn)
        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     b"Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
                     + _chunked(gzip.compress(SSE)))

    with raw_server(handler) as (port, _):
        (record,) = await _send(_options(port))
    assert (record.status, record.completion_tokens, len(record.chunk_at)) == ("ok", 2, 2)


async def test_keep_alive_reuses_one_connection() -> None:
    def handler(conn: socket.socket) -> None:
        for _ in range(3):
            read_request(conn)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                         b"Content-Length: %d\r\n\r\n%b" % (len(SSE), SSE))

    with raw_server(handler) as (port, accepted):
        records = await _send(_options(port), times=3)
    assert [r.status for r in records] == ["ok"] * 3 and len(accepted) == 1
    assert records[0].connect_ms is not None and records[0].connect_ms > 0
    assert [r.connect_ms for r in records[1:]] == [None, None]  # reused: nothing opened


@pytest.mark.slow
async def test_stamps_sit_at_the_wire(tmp_path: Path) -> None:
    """sent_at after the TLS handshake (held 0.3 s by the server), before the server
    answers; each chunk stamped after the server wrote it, before the next."""
    context, cert = server_context(tmp_path)
    marks: dict[str, int] = {}
    writes: list[int] = []

    def handler(conn: socket.socket) -> None:
        time.sleep(0.3)  # pace: a slow TLS handshake
        marks["handshake"] = time.perf_counter_ns()
        with context.wrap_socket(conn, server_side=True) as tls:
            read_request(tls)
            marks["read"] = time.perf_counter_ns()
            tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                        b"Transfer-Encoding: chunked\r\n\r\n")
            for event in SSE.split(b"\n\n")[:-1]:
                time.sleep(0.05)  # pace: chunks written apart
                writes.append(time.perf_counter_ns())
                tls.sendall(_chunked(event + b"\n\n")[:-5])
            tls.sendall(b"0\r\n\r\n")

    with raw_server(handler) as (port, _):
        (record,) = await _send(_options(port, "https", ca_bundle=str(cert)))
    assert record.status == "ok", (record.reason, record.detail)
    assert record.sent_at is not None and record.first_token_at is not None
    assert marks["handshake"] < record.sent_at < writes[0]
    assert marks["read"] < writes[0]  # the server answered 50 ms after it read
    assert record.scheduled_at + 300_000_000 < record.sent_at  # the connect is not in TTFT
    assert record.connect_ms is not None and record.connect_ms >= 300  # it is recorded
    assert writes[0] < record.chunk_at[0] < writes[1] < record.chunk_at[1] < writes[2]
    assert record.first_byte_at is not None and record.first_byte_at < record.chunk_at[0]
    assert record.ended_at is not None and record.ended_at >= writes[-1]


ANSWER = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
          b"Transfer-Encoding: chunked\r\n\r\n" + _chunked(SSE))


async def _timed_send(port: int, ahead_ms: int) -> tuple[RequestRecord, int]:
    """One request sent with a target `ahead_ms` from now; its record and the target."""
    options = _options(port)
    async with make_session(options, 1, {}) as session:
        client = StreamingClient(session, options, "m", "chat", 2)
        target = time.perf_counter_ns() + ahead_ms * 1_000_000
        record = RequestRecord(0, 1, 0, target)
        await client.send(builtin_source(8, 1).next_request(), record, at_ns=target)
    return record, target


async def test_a_timed_send_connects_ahead_and_writes_at_its_target() -> None:
    """With `at_ns` the connection is opened before the target (its connect is not in the
    send lateness) and nothing is written before the target."""
    accepted_at: list[int] = []
    received_at: list[int] = []

    def handler(conn: socket.socket) -> None:
        accepted_at.append(time.perf_counter_ns())  # one process: the client's clock
        read_request(conn)
        received_at.append(time.perf_counter_ns())
        conn.sendall(ANSWER)

    with raw_server(handler) as (port, _):
        record, target = await _timed_send(port, 200)
    assert record.status == "ok" and record.connect_ms is not None
    assert record.sent_at is not None and record.sent_at >= target
    assert accepted_at[0] < target <= received_at[0]


@pytest.mark.slow
async def test_a_connection_the_server_closes_before_the_target_is_replaced() -> None:
    """The server drops the first connection while the request waits for its target: the
    request goes out whole on a new one, never written to the closed socket."""
    accepted: list[int] = []

    def handler(conn: socket.socket) -> None:
        accepted.append(1)
        if len(accepted) == 1:
            return  # closed (by _guarded) before any request came
        read_request(conn)
        conn.sendall(ANSWER)

    with raw_server(handler) as (port, _):
        record, _ = await _timed_send(port, 300)
    assert (record.status, record.completion_tokens) == ("ok", 2)
    assert len(accepted) == 2
