"""The body of one worker process: its own event loop, client and source, serving the
parent's messages on one socket until told to exit or the parent goes away.

The parent starts `python -m servecap.load.worker_proc FD INDEX SIZE` (a fresh interpreter, not
multiprocessing's spawn, which re-runs the caller's main script: a user's script, pytest or
Streamlit) with one end of a socket pair as FD; the first frame on it is the backend factory,
pickled by the parent (servecap's own object, from its own process), then JSON lines.

Ctrl-C reaches every process of the terminal's group; a worker ignores it, because the
parent decides what an interrupt means (cancel in flight, keep every row) and tells it.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import socket
import struct
import sys

from servecap.load.event_loop import loop_factory
from servecap.load.worker_core import BackendFactory, WorkerCore, pong
from servecap.load.worker_wire import decode, encode

LINE_LIMIT = 64 * 1024 * 1024  # one message a line; a share of a long trace is large


def send_factory(sock: socket.socket, factory: BackendFactory) -> None:
    """The first frame to a new worker: its factory, length-prefixed."""
    data = pickle.dumps(factory)
    sock.sendall(struct.pack("!Q", len(data)) + data)


def _read_factory(sock: socket.socket) -> BackendFactory:
    size = struct.unpack("!Q", _read_exactly(sock, 8))[0]
    # the parent wrote it over a socket pair only it and this process hold
    factory: BackendFactory = pickle.loads(_read_exactly(sock, size))  # noqa: S301
    return factory


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("the parent closed the socket")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def main(argv: list[str]) -> None:
    """`python -m servecap.load.worker_proc FD INDEX SIZE`: worker INDEX of SIZE."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sock = socket.socket(fileno=int(argv[0]))
    worker_main(sock, _read_factory(sock), int(argv[1]), int(argv[2]))


def worker_main(sock: socket.socket, factory: BackendFactory, index: int, size: int) -> None:
    """Serve the parent on `sock` until it says exit or goes away."""
    # the client's timing is measured on uvloop, as in one process
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        runner.run(_serve(sock, factory, index, size))


async def _serve(sock: socket.socket, factory: BackendFactory, index: int, size: int) -> None:
    reader, writer = await asyncio.open_unix_connection(sock=sock, limit=LINE_LIMIT)

    def emit(message: dict[str, object]) -> None:
        writer.write(encode(message))  # into the kernel now unless the parent is behind

    async with factory(index, size) as (backend, source):
        core = WorkerCore(backend, source, emit)
        emit({"op": "hello", "pid": os.getpid()})
        await writer.drain()
        while line := await reader.readline():
            message = decode(line)
            op = message["op"]
            if op == "ping":
                emit(pong(message))
            elif op == "level":
                core.start(message)
            elif op == "stop":
                core.stop()
            elif op == "cancel":
                core.cancel()
            elif op == "exit":
                break
            await writer.drain()
        core.cancel()  # the parent is gone or done: nothing more is sent
        await core.wait()
    await writer.drain()
    writer.close()


if __name__ == "__main__":
    main(sys.argv[1:])
