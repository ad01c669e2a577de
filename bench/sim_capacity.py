"""How many concurrent streams the simulator sustains on one core with its schedule intact.

The simulator runs as a child process pinned to CPU 0 with a flat profile: every engine step
takes exactly ``--itl-ms`` (default 10 ms) whatever the batch, so each stream gets one token
every ``itl`` ms. A lean client (raw asyncio protocol on uvloop, keep-alive, one connection
per stream), pinned to CPU 1, runs closed-loop streams at rising concurrency. Per level:

- ``itl_err_*``: per request ``(last - first) / (N - 1) - itl`` as the client sees it;
- ``step_late_mean_ms``: engine events that fired after their target (the server's own
  stamps, from ``/metrics``): the loop is falling behind when this grows;
- ``first_token_late_mean_ms``: first-token writes after their event's target (TTFT error);
- ``chunk_late_mean_ms``: every chunk write after its event's target. Writes are
  sequential, so the k-th of n streams in a step gets its chunk k writes late; this is the
  cost of one socket write per stream per step (see ``--floor``), the same for every step,
  so ITL does not see it;
- ``build_us_per_chunk`` and ``write_us_per_chunk``: real time the engine loop spent per
  chunk building the step's chunks, then writing them to the sockets (one batch a step);
- ``server_user_pct``, ``server_sys_pct`` (Python and kernel) and ``client_cpu_pct``: share
  of one core each used.

A level is sustained when the engine keeps its schedule (mean step lateness < 1 ms) and the
client-visible errors are under 1 ms (mean |ITL error| and mean first-token lateness).
Usage::

    python bench/sim_capacity.py [--levels 256,512,1024,1536,2048] [--seconds 8]
    python bench/sim_capacity.py --floor [--levels ...]   # the kernel's share alone

``--floor`` replaces the simulator by the least any server must do (one 200-byte send per
stream per ITL, no HTTP, no model) and prints the CPU share that takes on one core: the
kernel's part of it bounds every single-threaded server on this machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import uvloop

from servecap.sim import start_server_process

TICK = os.sysconf("SC_CLK_TCK")


class StreamLoop(asyncio.Protocol):
    """One keep-alive connection running streams back to back until ``until``."""

    def __init__(self, request: bytes, until: float, out: list[list[float]]) -> None:
        self.request = request
        self.until = until
        self.out = out
        self.stamps: list[float] = []
        self.closed = asyncio.get_running_loop().create_future()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self._send()

    def _send(self) -> None:
        assert self.transport is not None
        self.stamps = [time.monotonic()]  # send time first
        self.transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        now = time.monotonic()
        self.stamps.extend([now] * data.count(b'"text"'))
        if b"[DONE]" in data:
            self.out.append(self.stamps)
            if now < self.until:
                self._send()
            else:
                assert self.transport is not None
                self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


def cpu_seconds(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of a process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) / TICK, int(fields[12]) / TICK


async def scrape(host: str, port: int) -> dict[str, float]:
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    text = (await reader.read()).decode()
    writer.close()
    values: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("sim:"):
            values[line.split("{", 1)[0]] = float(line.rsplit(" ", 1)[1])
    return values


def _mean_ms(before: dict[str, float], after: dict[str, float], total: str, count: str) -> float:
    n = after[count] - before[count]
    return 1000 * (after[total] - before[total]) / max(n, 1)


def _per_chunk_us(before: dict[str, float], after: dict[str, float], build: bool) -> float:
    """Real microseconds per chunk the engine loop spent building chunks (``build``) or
    writing them to the sockets."""

    def delta(name: str) -> float:
        return after[name] - before[name]

    chunks = max(delta("sim:chunk_lateness_chunks_total"), 1)
    write = delta("sim:write_seconds_total")
    spent = delta("sim:deliver_seconds_total") - write if build else write
    return round(1e6 * spent / chunks, 2)


async def run_level(
    host: str, port: int, pid: int, c: int, seconds: float, tokens: int, itl: float
) -> dict[str, float]:
    body = json.dumps({"prompt": "x" * 16, "max_tokens": tokens, "stream": True}).encode()
    request = (
        b"POST /v1/completions HTTP/1.1\r\nHost: sim\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%b" % (len(body), body)
    )
    loop = asyncio.get_running_loop()
    before = await scrape(host, port)
    out: list[list[float]] = []
    cpu0, mine0, t0 = cpu_seconds(pid), time.process_time(), time.monotonic()
    until = t0 + seconds
    # streams start spread over one request's duration, as they end up on any real server
    # (on the flat profile, streams started together would stay in lock-step for good)
    spread = (tokens + 1) * itl

    async def start(k: int) -> StreamLoop:
        await asyncio.sleep(spread * k / c)

        def protocol() -> StreamLoop:
            return StreamLoop(request, until, out)

        _, stream = await loop.create_connection(protocol, host, port)
        return stream

    conns = await asyncio.gather(*[start(k) for k in range(c)])
    await asyncio.gather(*[p.closed for p in conns])
    wall = time.monotonic() - t0
    (user1, sys1), client_cpu = cpu_seconds(pid), time.process_time() - mine0
    server_user, server_sys = user1 - cpu0[0], sys1 - cpu0[1]
    after = await scrape(host, port)
    full = [s for s in out if len(s) == tokens + 1]
    ttft = np.array([s[1] - s[0] for s in full])
    itl_err = np.array([(s[-1] - s[1]) / (tokens - 1) - itl for s in full])
    return {
        "concurrency": c,
        "requests": len(full),
        "tokens_per_s": round(sum(len(s) - 1 for s in out) / wall),
        "ttft_mean_ms": 1000 * float(np.mean(ttft)),
        "itl_err_mean_ms": 1000 * float(np.mean(np.abs(itl_err))),
        "itl_err_p99_ms": 1000 * float(np.percentile(np.abs(itl_err), 99)),
        "step_late_mean_ms": _mean_ms(
            before, after, "sim:step_lateness_seconds_total", "sim:step_lateness_events_total"
        ),
        "first_token_late_mean_ms": _mean_ms(
            before,
            after,
            "sim:first_token_lateness_seconds_total",
            "sim:first_token_lateness_chunks_total",
        ),
        "chunk_late_mean_ms": _mean_ms(
            before, after, "sim:chunk_lateness_seconds_total", "sim:chunk_lateness_chunks_total"
        ),
        "build_us_per_chunk": _per_chunk_us(before, after, build=True),
        "write_us_per_chunk": _per_chunk_us(before, after, build=False),
        "server_user_pct": round(100 * server_user / wall),
        "server_sys_pct": round(100 * server_sys / wall),
        "client_cpu_pct": round(100 * client_cpu / wall),
    }


def floor_server(port_out: Any, n: int, itl: float, seconds: float) -> None:
    """The least any server must do: one 200-byte send per stream per ``itl`` (no HTTP, no
    model), pinned to CPU 0. Used by ``--floor`` to show what the kernel alone costs."""
    os.sched_setaffinity(0, {0})
    listener = socket.create_server(("127.0.0.1", 0), backlog=n)
    port_out.send(listener.getsockname()[1])
    socks = [listener.accept()[0] for _ in range(n)]
    for sock in socks:  # as asyncio and uvloop set it on every TCP transport
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    data = b"x" * 200
    t = time.monotonic()
    end = t + seconds
    while t < end:
        for sock in socks:
            sock.send(data)
        t += itl
        time.sleep(max(0.0, t - time.monotonic()))
    for sock in socks:
        sock.close()


class Drain(asyncio.Protocol):
    """Reads and counts bytes until the server closes."""

    def __init__(self) -> None:
        self.closed = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        pass

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def drain_all(port: int, n: int) -> None:
    loop = asyncio.get_running_loop()
    conns = [(await loop.create_connection(Drain, "127.0.0.1", port))[1] for _ in range(n)]
    await asyncio.gather(*[c.closed for c in conns])


def floor(n: int, itl: float, seconds: float) -> dict[str, float]:
    """CPU share the floor server needs for ``n`` streams (user and kernel)."""
    parent, child = multiprocessing.Pipe()
    proc = multiprocessing.Process(target=floor_server, args=(child, n, itl, seconds))
    proc.start()
    port = parent.recv()
    assert proc.pid is not None
    os.sched_setaffinity(0, {1})
    t0, (u0, s0) = time.monotonic(), cpu_seconds(proc.pid)
    uvloop.run(drain_all(port, n))
    wall, (u1, s1) = time.monotonic() - t0, cpu_seconds(proc.pid)
    proc.join()
    return {
        "streams": n,
        "sends_per_s": round(n / itl),
        "floor_user_pct": round(100 * (u1 - u0) / wall),
        "floor_sys_pct": round(100 * (s1 - s0) / wall),
        "kernel_us_per_send": round(1e6 * (s1 - s0) / (wall * n / itl), 2),
    }


def main() -> None:
    """Parse the options, start the simulator and print one JSON row per level."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--levels", default="256,512,1024,1536,2048")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--itl-ms", type=float, default=10.0)
    ap.add_argument("--tokens", type=int, default=100)
    ap.add_argument("--floor", action="store_true", help="measure the kernel floor instead")
    args = ap.parse_args()
    itl = args.itl_ms / 1000.0
    if args.floor:
        for c in [int(x) for x in args.levels.split(",")]:
            print(json.dumps(floor(c, itl, args.seconds)), flush=True)
        return
    prof = {
        "name": "flat",
        "params": {"step_base_ms": args.itl_ms, "idle_window_ms": 0.0, "max_num_seqs": 65536},
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "flat.json"
        path.write_text(json.dumps(prof))
        with start_server_process(str(path)) as server:
            if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) >= 2:
                os.sched_setaffinity(server.proc.pid, {0})
                os.sched_setaffinity(0, {1})
            host, port, pid = "127.0.0.1", server.port, server.proc.pid
            uvloop.run(run_level(host, port, pid, 8, 1.0, args.tokens, itl))  # warm-up
            best = 0
            for c in [int(x) for x in args.levels.split(",")]:
                row = uvloop.run(run_level(host, port, pid, c, args.seconds, args.tokens, itl))
                ok = (
                    row["step_late_mean_ms"] < 1.0
                    and row["itl_err_mean_ms"] < 1.0
                    and row["first_token_late_mean_ms"] < 1.0
                )
                best = c if ok else best
                print(json.dumps({**row, "sustained": ok}), flush=True)
    print(f"largest sustained concurrency at {args.itl_ms:g} ms ITL: {best}")


if __name__ == "__main__":
    main()
