"""The simulator's HTTP/1.1 layer over raw loopback sockets: framing, keep-alive, pipelining,
malformed and oversized requests, routes and methods, writes after the client left, HTTP/1.0,
batched writes and the direct-write path."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator

import h11
import pytest

from servecap.sim.server.http11 import MAX_BODY_BYTES, HttpRequest, Responder, start_http_server
from servecap.sim.server.runner import SimProcessHandle, start_server_process
from servecap.sim.server.wire import Wire, WriteBatch


@pytest.fixture(scope="module")
def sim() -> Iterator[SimProcessHandle]:
    # a process, not a thread of the test's: in a parallel worker that had run other modules
    # first, a thread-hosted simulator once stopped answering (docs/validation/test-commands.md)
    with start_server_process("deterministic", time_scale=10.0) as handle:
        yield handle


def _connect(sim: SimProcessHandle) -> socket.socket:
    return socket.create_connection(("127.0.0.1", sim.port), timeout=10)


def _post(path: str, body: dict[str, object] | bytes) -> bytes:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return (
        b"POST %b HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%b" % (path.encode(), len(raw), raw)
    )


def _responses(sock: socket.socket, count: int) -> list[tuple[h11.Response, bytes]]:
    """Read ``count`` whole responses with an independent parser (h11 client side)."""
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method="GET", target="/", headers=[("host", "sim")]))
    conn.send(h11.EndOfMessage())
    out: list[tuple[h11.Response, bytes]] = []
    head: h11.Response | None = None
    body = b""
    while len(out) < count:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            data = sock.recv(65536)
            conn.receive_data(data)
            if not data:
                break
        elif isinstance(event, h11.Response):
            head, body = event, b""
        elif isinstance(event, h11.Data):
            body += event.data
        elif isinstance(event, h11.EndOfMessage):
            assert head is not None
            out.append((head, body))
            if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
                conn.start_next_cycle()
                conn.send(h11.Request(method="GET", target="/", headers=[("host", "sim")]))
                conn.send(h11.EndOfMessage())
        elif isinstance(event, h11.ConnectionClosed):
            break
    return out


def test_a_stream_is_chunked_and_ends_with_done(sim: SimProcessHandle) -> None:
    with _connect(sim) as sock:
        sock.sendall(_post("/v1/completions", {"prompt": "hi", "max_tokens": 3, "stream": True}))
        [(head, body)] = _responses(sock, 1)
    assert head.status_code == 200
    assert dict(head.headers)[b"transfer-encoding"] == b"chunked"
    events = [e for e in body.decode().split("\n\n") if e]
    assert len(events) == 4 and events[-1] == "data: [DONE]"
    texts = [json.loads(e[6:])["choices"][0]["text"] for e in events[:-1]]
    assert "".join(texts) == " the model is"


def test_keep_alive_and_pipelined_requests_are_answered_in_order(sim: SimProcessHandle) -> None:
    stream = _post("/v1/completions", {"prompt": "a", "max_tokens": 2, "stream": True})
    whole = _post("/v1/completions", {"prompt": [1, 2, 3], "max_tokens": 2})
    health = b"GET /health HTTP/1.1\r\nHost: sim\r\n\r\n"
    with _connect(sim) as sock:
        sock.sendall(stream + whole + health)  # three requests in one write
        answers = _responses(sock, 3)
        sock.sendall(health)  # and the connection is still open afterwards
        [(last, text)] = _responses(sock, 1)
    assert [h.status_code for h, _ in answers] == [200, 200, 200]
    assert answers[0][1].endswith(b"data: [DONE]\n\n")
    assert json.loads(answers[1][1])["usage"]["prompt_tokens"] == 3
    assert answers[2][1] == b"ok"
    assert last.status_code == 200 and text == b"ok"


def test_malformed_request_gets_400_and_the_connection_closes(sim: SimProcessHandle) -> None:
    with _connect(sim) as sock:
        sock.sendall(b"THIS IS NOT HTTP\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/1.1 400 ")
    assert b'"error"' in data


def test_oversized_body_gets_413(sim: SimProcessHandle) -> None:
    head = b"POST /v1/completions HTTP/1.1\r\nHost: sim\r\nContent-Length: %d\r\n\r\n" % (
        MAX_BODY_BYTES + 1
    )
    with _connect(sim) as sock:
        sock.sendall(head)
        sent = 0
        block = b"x" * 65536
        data = b""
        try:
            while sent <= MAX_BODY_BYTES:
                sock.sendall(block)
                sent += len(block)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed while we were still sending
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except ConnectionResetError:
            pass
    assert data.startswith(b"HTTP/1.1 413 ")


@pytest.mark.parametrize(
    ("request_line", "status"),
    [
        (b"GET /nowhere HTTP/1.1", 404),
        (b"GET /v1/completions HTTP/1.1", 405),
        (b"POST /metrics HTTP/1.1", 405),
    ],
)
def test_routes_and_methods(sim: SimProcessHandle, request_line: bytes, status: int) -> None:
    with _connect(sim) as sock:
        sock.sendall(request_line + b"\r\nHost: sim\r\nContent-Length: 0\r\n\r\n")
        [(head, body)] = _responses(sock, 1)
    assert head.status_code == status
    assert "message" in json.loads(body)["error"]


def test_a_client_that_leaves_mid_stream_breaks_nothing(sim: SimProcessHandle) -> None:
    body = {"prompt": "x", "max_tokens": 100_000, "stream": True}  # 100 s: running past the wait
    for _ in range(5):  # leave five streams in the middle, each on a fresh connection
        sock = _connect(sim)
        sock.sendall(_post("/v1/completions", body))
        sock.recv(4096)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.close()  # RST: later writes to it fail in the kernel
    deadline = time.monotonic() + 10
    while (running := _running(sim)) != "0":  # the five are gone once the server notices
        assert time.monotonic() < deadline, running
        time.sleep(0.01)  # poll
    with _connect(sim) as sock:  # and the engine still serves
        sock.sendall(_post("/v1/completions", {"prompt": "y", "max_tokens": 2, "stream": True}))
        [(head, _)] = _responses(sock, 1)
    assert head.status_code == 200


def _running(sim: SimProcessHandle) -> str:
    """The server's running-requests gauge, as /metrics writes it."""
    with _connect(sim) as sock:
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: sim\r\n\r\n")
        [(_, metrics)] = _responses(sock, 1)
    lines = metrics.decode().splitlines()
    return next(ln for ln in lines if ln.startswith("vllm:num_requests_run")).rsplit(" ", 1)[1]


async def test_a_handler_that_raises_gets_500_and_the_server_goes_on() -> None:
    def handler(request: HttpRequest, responder: Responder) -> None:
        if request.path == "/boom":
            raise RuntimeError("a bug")
        responder.send(200, "text/plain", b"fine")

    server = await start_http_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        answers = []
        for path in (b"/boom", b"/ok"):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET %b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path)
            answers.append(await asyncio.wait_for(reader.read(), 10))
            writer.close()
    finally:
        server.close()
    assert answers[0].startswith(b"HTTP/1.1 500 ")
    assert answers[1].startswith(b"HTTP/1.1 200 ") and answers[1].endswith(b"fine")


def test_a_client_that_half_closes_still_gets_the_whole_stream(sim: SimProcessHandle) -> None:
    with _connect(sim) as sock:
        sock.sendall(_post("/v1/completions", {"prompt": "hi", "max_tokens": 5, "stream": True}))
        sock.shutdown(socket.SHUT_WR)  # done sending; still reading
        data = b""
        while chunk := sock.recv(65536):  # ends when the server closes after the answer
            data += chunk
    assert data.startswith(b"HTTP/1.1 200 ")
    assert data.count(b'"text"') == 5
    assert data.endswith(b"data: [DONE]\n\n\r\n0\r\n\r\n")


def _read_all(sock: socket.socket) -> bytes:
    """Everything until the server closes (a reset after the answer ends it too: a server
    that closes with our unread bytes in its buffer resets the connection)."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data


def test_an_http10_client_gets_its_stream_close_delimited(sim: SimProcessHandle) -> None:
    raw = json.dumps({"prompt": "hi", "max_tokens": 3, "stream": True}).encode()
    request = b"POST /v1/completions HTTP/1.0\r\nContent-Length: %d\r\n\r\n%b" % (len(raw), raw)
    with _connect(sim) as sock:
        sock.sendall(request)
        data = _read_all(sock)  # ends: the server closes after the body
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ")
    assert b"transfer-encoding" not in head.lower() and b"connection: close" in head.lower()
    assert body.count(b'"text"') == 3 and body.endswith(b"data: [DONE]\n\n")


def test_an_oversized_head_gets_431(sim: SimProcessHandle) -> None:
    with _connect(sim) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: sim\r\n")
        try:
            for _ in range(100):  # 100 x 1 KiB of headers, never ending the head
                sock.sendall(b"X-Filler: " + b"y" * 1014 + b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        data = _read_all(sock)
    assert data.startswith(b"HTTP/1.1 431 ")


def test_an_upgrade_request_is_answered_plainly_then_closed(sim: SimProcessHandle) -> None:
    upgrade = b"GET /health HTTP/1.1\r\nHost: sim\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n"
    with _connect(sim) as sock:
        sock.sendall(upgrade + b"GET /health HTTP/1.1\r\nHost: sim\r\n\r\n")
        data = _read_all(sock)
    assert data.startswith(b"HTTP/1.1 200 ") and data.endswith(b"\r\n\r\nok")
    assert data.count(b"HTTP/1.1") == 1  # what followed the upgrade is not read


def test_a_bad_request_after_a_good_one_is_answered_after_it(sim: SimProcessHandle) -> None:
    good = b"GET /health HTTP/1.1\r\nHost: sim\r\n\r\n"
    with _connect(sim) as sock:
        sock.sendall(good + b"NOT HTTP AT ALL\r\n\r\n")
        data = _read_all(sock)
    first, _, rest = data.partition(b"\r\n\r\nok")
    assert first.startswith(b"HTTP/1.1 200 ")
    assert rest.startswith(b"HTTP/1.1 400 ") and b'"error"' in rest


@pytest.mark.slow
async def test_a_slow_reader_gets_every_byte_in_order() -> None:
    """More than the socket buffers hold, written while the client reads nothing, then more
    while it reads slowly: everything arrives, whole and in order."""
    burst = [b"%07d|" % i * 512 for i in range(2000)]  # 8 MiB, 4 KiB a piece
    later = [b"late %04d|" % i * 400 for i in range(50)]

    def handler(request: HttpRequest, responder: Responder) -> None:
        responder.start_stream(200, "application/octet-stream")
        for piece in burst:
            responder.write_chunk(piece)

        def rest() -> None:
            for piece in later:
                responder.write_chunk(piece)
            responder.end_stream()

        asyncio.get_running_loop().call_later(0.4, rest)

    server = await start_http_server(handler, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    data = bytearray()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 16)
        writer.write(b"GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        await asyncio.sleep(0.2)  # pace: a reader that reads nothing while the burst is written
        while piece := await asyncio.wait_for(reader.read(1 << 16), 30):
            data += piece
            await asyncio.sleep(0.002)  # pace: 64 KiB every 2 ms, so the queue outlives 0.4 s
        writer.close()
    finally:
        server.close()
    conn = h11.Connection(h11.CLIENT)
    conn.send(h11.Request(method="GET", target="/", headers=[("host", "x")]))
    conn.send(h11.EndOfMessage())
    conn.receive_data(bytes(data))
    conn.receive_data(b"")
    body = bytearray()
    while (event := conn.next_event()) is not h11.NEED_DATA:
        if isinstance(event, h11.Data):
            body += event.data
        if isinstance(event, h11.EndOfMessage | h11.ConnectionClosed):
            break
    assert bytes(body) == b"".join(burst + later)


async def test_batched_writes_wait_for_the_flush_and_go_out_in_order() -> None:
    batch = WriteBatch()

    def handler(request: HttpRequest, responder: Responder) -> None:
        batch.begin()
        responder.start_stream(200, "text/plain")
        for word in (b"one ", b"two ", b"three"):
            responder.write_chunk(word)
        responder.end_stream(b"!")  # HTTP/1.0: the end closes the connection, in the batch
        assert batch.pending, "nothing may go out while the batch is open"
        batch.flush()

    server = await start_http_server(handler, "127.0.0.1", 0, batch)
    port = server.sockets[0].getsockname()[1]
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET / HTTP/1.0\r\n\r\n")
        data = await asyncio.wait_for(reader.read(-1), 10)
        writer.close()
    finally:
        server.close()
    assert data.endswith(b"\r\n\r\none two three!")


class _RecordingTransport:
    """Stands in for a transport around a real socket: records what it is asked to write."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.queued: list[bytes] = []

    def get_extra_info(self, name: str) -> socket.socket | None:
        return self.sock if name == "socket" else None

    def write(self, data: bytes) -> None:
        self.queued.append(bytes(data))


def test_the_wire_writes_directly_until_a_short_write_then_always_through_the_transport() -> None:
    ours, peer = socket.socketpair()
    with ours, peer:
        ours.setblocking(False)
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        transport = _RecordingTransport(ours)
        wire = Wire(transport)  # type: ignore[arg-type]
        wire.send(b"first")
        assert transport.queued == []  # went straight to the socket
        assert peer.recv(100) == b"first"
        big = bytes(range(256)) * 4096  # 1 MiB: far more than the socket takes
        wire.send(big)
        assert transport.queued and big.endswith(transport.queued[0])  # the rest, queued
        peer.setblocking(False)
        while True:  # the socket drains: it would take a direct write again
            try:
                peer.recv(1 << 20)
            except BlockingIOError:
                break
        wire.send(b"after")
        assert transport.queued[-1] == b"after"  # but order needs it behind the queue


class _BrokenWire:
    def send(self, data: bytes) -> None:
        raise RuntimeError("this connection's transport is gone")


class _ListWire:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send(self, data: bytes) -> None:
        self.sent.append(data)


def test_a_failing_held_write_does_not_keep_the_others() -> None:
    batch, good = WriteBatch(), _ListWire()
    batch.begin()
    batch.pending += [(_BrokenWire(), b"lost"), (good, b"kept")]  # type: ignore[list-item]
    batch.flush()
    assert good.sent == [b"kept"] and not batch.pending and not batch.open
