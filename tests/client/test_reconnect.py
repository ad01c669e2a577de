"""A request that meets a pooled connection the server has already given up is sent again on
another one; a request that fails on a new connection is not (a raw server on loopback)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from servecap.client.http import StreamingClient, make_session
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


class StaleServer:
    """Answers one request per connection; a second request on the same connection is
    dropped unanswered (the connection had been given up: llama-server's habit). With
    ``answer=False`` it drops every request, even the first on a new connection."""

    def __init__(self, answer: bool = True) -> None:
        self.answer = answer
        self.connections = 0
        self.answered = 0

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
                if not (first and self.answer):
                    return  # closes without a byte of response
                first = False
                writer.write(RESPONSE)
                await writer.drain()
                self.answered += 1
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@asynccontextmanager
async def serving(server: StaleServer) -> AsyncIterator[ClientOptions]:
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        yield ClientOptions(base_url=f"http://127.0.0.1:{port}/v1", timeout_s=10)
    finally:
        listener.close()


async def _send(client: StreamingClient, index: int) -> RequestRecord:
    record = RequestRecord(0, 4, index, 0)
    await client.send(builtin_source(8, 1).next_request(), record)
    return record


async def test_stale_pooled_connections_are_skipped_until_a_new_one_answers() -> None:
    server = StaleServer()
    async with serving(server) as options, make_session(options, 4, {}) as session:
        client = StreamingClient(session, options, "m", "chat", 1)
        warm = await asyncio.gather(*[_send(client, i) for i in range(4)])
        assert [r.status for r in warm] == ["ok"] * 4  # four pooled connections, all stale now
        record = await _send(client, 4)
    assert record.status == "ok", (record.reason, record.detail)
    assert record.reconnects >= 3  # more stale connections in a row than the old limit of 2
    assert server.answered == 5
    assert server.connections == 5  # the last attempt went out on a new connection


async def test_a_failure_on_a_new_connection_is_final() -> None:
    server = StaleServer(answer=False)
    async with serving(server) as options, make_session(options, 1, {}) as session:
        client = StreamingClient(session, options, "m", "chat", 1)
        record = await _send(client, 0)
    assert record.status != "ok"
    assert record.reconnects == 0
    assert server.connections == 1  # sent once: a server fault is never retried
