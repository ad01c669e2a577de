"""The reconnect rule: a request is written only to a connection that was open just before,
and once written it is never sent again. A pooled connection the server already closed
(llama-server: keep-alive advertised, closed after each stream) is skipped and counted in
`reconnects`; a server that reads a request and hangs up is a failure, sent once.
Raw servers on loopback, so each test controls exactly when the server closes."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import SimpleNamespace

import pytest

from servecap.client.http import StreamingClient, make_session
from servecap.client.pool import peer_closed
from servecap.core.config import ClientOptions
from servecap.core.records import RequestRecord
from servecap.workload.source import builtin_source

SSE = (
    b'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n'
    b'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}\n\n'
    b"data: [DONE]\n\n"
)
RESPONSE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: keep-alive\r\n"
    b"Content-Length: %d\r\n\r\n%b" % (len(SSE), SSE)
)


class RawServer:
    """Counts every request it read in full (`received`). `close_after_answer`: llama-server's
    habit, the answer and the FIN in one segment; `drop_reused`: a second request on one
    connection is read and then dropped unanswered (a server fault); `answer=False`: every
    request is read and dropped."""

    def __init__(self, close_after_answer: bool = False, drop_reused: bool = False,
                 answer: bool = True, close_delay_s: float = 0.0) -> None:
        self.close_after_answer = close_after_answer
        self.close_delay_s = close_delay_s
        self.drop_reused = drop_reused
        self.answer = answer
        self.connections = 0
        self.received = 0
        self.answered = 0
        self.closed = threading.Semaphore(0)  # released once per connection it closed

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        first = True
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                self.received += 1
                if not self.answer or (self.drop_reused and not first):
                    return  # closes without a byte of response
                first = False
                self._answer(writer)
                await writer.drain()
                if self.close_after_answer:
                    await asyncio.sleep(self.close_delay_s)  # pace: the close, delayed
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()  # the socket is closed: its FIN is on the wire
            self.closed.release()

    def _answer(self, writer: asyncio.StreamWriter) -> None:
        self.answered += 1
        if not self.close_after_answer or self.close_delay_s:
            writer.write(RESPONSE)
            return
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)  # data and FIN together
        writer.write(RESPONSE)
        writer.write_eof()


@asynccontextmanager
async def serving(server: RawServer) -> AsyncIterator[ClientOptions]:
    """The server on its own event loop in a thread, so it closes on its own schedule
    even while the client's loop is blocked."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    start = asyncio.start_server(server.handle, "127.0.0.1", 0)
    listener = asyncio.run_coroutine_threadsafe(start, loop).result(5)
    port = listener.sockets[0].getsockname()[1]
    try:
        yield ClientOptions(base_url=f"http://127.0.0.1:{port}/v1", timeout_s=10)
    finally:
        asyncio.run_coroutine_threadsafe(_shut(listener), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


async def _shut(listener: asyncio.Server) -> None:
    """Close the listener and end every connection handler still running."""
    listener.close()
    current = asyncio.current_task()
    tasks = [t for t in asyncio.all_tasks() if t is not current]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


async def _send(client: StreamingClient, index: int) -> RequestRecord:
    record = RequestRecord(0, 4, index, 0)
    await client.send(builtin_source(8, 1).next_request(), record)
    return record


async def test_connections_closed_after_each_stream_are_skipped_before_writing() -> None:
    server = RawServer(close_after_answer=True, close_delay_s=0.02)
    async with serving(server) as options, make_session(options, 4, {}) as session:
        client = StreamingClient(session, options, "m", "chat", 1)
        warm = await asyncio.gather(*[_send(client, i) for i in range(4)])
        assert [r.status for r in warm] == ["ok"] * 4  # four pooled connections
        # The server closes 20 ms after answering. This event loop is blocked until it has
        # closed all four, so aiohttp never saw the FINs and holds all four as open: only a
        # poll of each socket tells, before anything is written.
        for _ in range(4):
            assert server.closed.acquire(timeout=10)
        record = await _send(client, 4)
    assert record.status == "ok", (record.reason, record.detail)
    assert record.reconnects == 4  # each stale connection skipped, none written to
    assert server.received == 5 == server.connections  # one request per connection, no resend


@pytest.mark.probation
async def test_a_server_closing_just_after_each_answer_is_never_written_to() -> None:
    """llama-server says Keep-Alive and closes a moment after each stream: the pool's first
    rested connection shows it, and from then on every request gets a new connection."""
    server = RawServer(close_after_answer=True, close_delay_s=0.005)
    async with serving(server) as options, make_session(options, 2, {}) as session:
        client = StreamingClient(session, options, "m", "chat", 1)

        async def stream(index: int) -> list[RequestRecord]:
            return [await _send(client, index) for _ in range(10)]

        records = [r for rs in await asyncio.gather(stream(0), stream(1)) for r in rs]
    assert [r.status for r in records] == ["ok"] * 20, {(r.reason, r.detail) for r in records}
    assert server.received == 20 == server.connections


async def test_a_closed_loop_against_close_after_each_stream_runs_clean() -> None:
    server = RawServer(close_after_answer=True)
    async with serving(server) as options, make_session(options, 2, {}) as session:
        client = StreamingClient(session, options, "m", "chat", 1)

        async def stream(index: int) -> list[RequestRecord]:
            return [await _send(client, index) for _ in range(10)]

        records = [r for rs in await asyncio.gather(stream(0), stream(1)) for r in rs]
    assert [r.status for r in records] == ["ok"] * 20, {r.reason for r in records}
    assert server.received == 20  # the server read exactly the requests recorded


async def test_a_request_the_server_read_and_dropped_is_not_sent_again() -> None:
    server = RawServer(drop_reused=True)
    async with serving(server) as options, make_session(options, 1, {}) as session:
        client = StreamingClient(session, options, "m", "chat", 1)
        first = await _send(client, 0)
        second = await _send(client, 0)  # on the reused connection, which is open
    assert first.status == "ok"
    assert (second.status, second.reason) == ("failed", "server_disconnected")
    assert second.reconnects == 0
    assert server.received == 2 == server.connections + 1  # sent once: never retried


async def test_a_failure_on_a_new_connection_is_final() -> None:
    server = RawServer(answer=False)
    async with serving(server) as options, make_session(options, 1, {}) as session:
        client = StreamingClient(session, options, "m", "chat", 1)
        record = await _send(client, 0)
    assert record.status != "ok"
    assert record.reconnects == 0
    assert server.connections == 1 == server.received  # sent once: never retried


async def test_peer_closed_polls_the_socket_not_the_event_loop() -> None:
    closed = asyncio.Event()
    handled = asyncio.Event()

    async def close_at_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()
        await writer.wait_closed()  # the socket is closed: its FIN is on the wire
        closed.set()
        handled.set()

    async def keep_open(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        handled.set()
        await closed.wait()  # open until the test ends

    for handler, expected in ((close_at_once, True), (keep_open, False)):
        listener = await asyncio.start_server(handler, "127.0.0.1", 0)
        port = listener.sockets[0].getsockname()[1]
        handled.clear()
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        await asyncio.wait_for(handled.wait(), 10)  # the server side ran (and closed, or not)
        held = SimpleNamespace(transport=writer.transport)  # as aiohttp's pooled protocol
        assert peer_closed(held) is expected
        writer.close()
        closed.set()
        listener.close()
