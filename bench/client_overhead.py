"""How much the client costs, and how far it bends what it measures.

Not a test: prints figures. The server runs in its own process on one core, the client is
pinned to the other, so the client's CPU is its own.

  python bench/client_overhead.py            # servecap's client (aiohttp)
  python bench/client_overhead.py --compare  # also httpx and a minimal raw-asyncio client

Part 2 also splits servecap's TTFT error: the schedule server reports (CLOCK_MONOTONIC, shared
by processes here) when its handler started and when it wrote the first chunk, so the error
divides into "before the server's handler ran" and "server write to client stamp".

Part 1: a zero-delay server streams 128 one-token chunks; client CPU ms per request and
requests/s at c=64 and c=256. Part 2: a 200 ms TTFT / 10 ms ITL schedule; mean TTFT and ITL
error at c=1, 64, 256.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import uvloop

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from servecap.client.http import StreamingClient, make_session  # noqa: E402
from servecap.core.config import ClientOptions  # noqa: E402
from servecap.core.records import RequestRecord  # noqa: E402
from servecap.metrics.level import summarise_level  # noqa: E402
from servecap.workload.prompts import build_prompts  # noqa: E402
from servecap.workload.source import Request  # noqa: E402

TOKENS = 128


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(ttft_ms: float, itl_ms: float) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    code = (
        "import os, uvloop; os.sched_setaffinity(0, {1}); uvloop.install();"
        "from aiohttp import web; from tests.servers.schedule_server import Schedule, make_app;"
        f"web.run_app(make_app(Schedule({ttft_ms / 1000}, {itl_ms / 1000})),"
        f" host='127.0.0.1', port={port}, access_log=None, print=None, backlog=4096)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, f"http://127.0.0.1:{port}/v1"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


SendFn = Callable[[int], Awaitable[RequestRecord]]


async def closed_loop(send: SendFn, concurrency: int, per_stream: int) -> list[RequestRecord]:
    records: list[RequestRecord] = []

    async def stream(index: int) -> None:
        for _ in range(per_stream):
            records.append(await send(index))

    await asyncio.gather(*(stream(i) for i in range(concurrency)))
    return records


async def servecap_client(base_url: str, concurrency: int, per_stream: int) -> list[RequestRecord]:
    options = ClientOptions(base_url=base_url)
    prompts = [Request(p.text, TOKENS, p.target_tokens) for p in build_prompts(128)]
    async with make_session(options, concurrency, {}) as session:
        client = StreamingClient(session, options, "test-model", "chat", TOKENS)

        async def send(index: int) -> RequestRecord:
            record = RequestRecord(0, concurrency, index, time.perf_counter_ns())
            await client.send(prompts[index % len(prompts)], record)
            return record

        await closed_loop(send, concurrency, 1)  # connect and warm up
        return await closed_loop(send, concurrency, per_stream)


async def httpx_client(base_url: str, concurrency: int, per_stream: int) -> list[RequestRecord]:
    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:

        async def send(index: int) -> RequestRecord:
            record = RequestRecord(0, concurrency, index, time.perf_counter_ns())
            body = {"model": "m", "max_tokens": TOKENS, "stream": True,
                    "messages": [{"role": "user", "content": "x" * 512}]}
            record.sent_at = time.perf_counter_ns()
            async with client.stream("POST", base_url + "/chat/completions", json=body) as resp:
                async for _chunk in resp.aiter_bytes():
                    now = time.perf_counter_ns()
                    if record.first_token_at is None:
                        record.first_token_at = now
                    record.last_token_at = now
                    record.chunk_at.append(now)
            record.ended_at = time.perf_counter_ns()
            record.completion_tokens = TOKENS
            return record

        await closed_loop(send, concurrency, 1)
        return await closed_loop(send, concurrency, per_stream)


async def raw_client(base_url: str, concurrency: int, per_stream: int) -> list[RequestRecord]:
    """A minimal HTTP/1.1 keep-alive client on asyncio streams (reads until [DONE])."""
    host_port = base_url.split("//")[1].split("/")[0]
    host, port = host_port.split(":")
    body = json.dumps({"model": "m", "max_tokens": TOKENS, "stream": True,
                       "messages": [{"role": "user", "content": "x" * 512}]}).encode()
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host_port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    conns: dict[int, tuple[asyncio.StreamReader, asyncio.StreamWriter]] = {}

    async def send(index: int) -> RequestRecord:
        if index not in conns:
            conns[index] = await asyncio.open_connection(host, int(port))
        reader, writer = conns[index]
        record = RequestRecord(0, concurrency, index, time.perf_counter_ns())
        record.sent_at = time.perf_counter_ns()
        writer.write(head + body)
        buffer = b""
        while b"[DONE]" not in buffer[-64:]:
            data = await reader.read(65536)
            now = time.perf_counter_ns()
            if not data:
                break
            if record.first_token_at is None:
                record.first_token_at = now
            record.last_token_at = now
            record.chunk_at.append(now)
            buffer = buffer[-64:] + data
        await reader.readuntil(b"0\r\n\r\n") if not buffer.endswith(b"0\r\n\r\n") else None
        record.ended_at = time.perf_counter_ns()
        record.completion_tokens = TOKENS
        return record

    await closed_loop(send, concurrency, 1)
    records = await closed_loop(send, concurrency, per_stream)
    for _, writer in conns.values():
        writer.close()
    return records


CLIENT = "servecap(aiohttp)"
CLIENTS = {CLIENT: servecap_client, "httpx": httpx_client, "raw-asyncio": raw_client}


def measure(name: str, base_url: str, concurrency: int, per_stream: int) -> dict[str, float]:
    runner = asyncio.Runner(loop_factory=uvloop.new_event_loop)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    records = runner.run(CLIENTS[name](base_url, concurrency, per_stream))
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    runner.close()
    for record in records:
        record.status = "ok"
        record.token_source = "usage"
    summary = summarise_level(concurrency, records)
    delivery = [
        (r.first_token_at - r.server_timings["first_write_ns"]) / 1e6
        for r in records
        if r.server_timings and r.first_token_at and r.server_timings.get("first_write_ns")
    ]
    to_handler = [
        (r.server_timings["handler_start_ns"] - r.sent_at) / 1e6
        for r in records
        if r.server_timings and r.sent_at and r.server_timings.get("handler_start_ns")
    ]
    return {
        "delivery_ms": sum(delivery) / len(delivery) if delivery else float("nan"),
        "to_handler_ms": sum(to_handler) / len(to_handler) if to_handler else float("nan"),
        "cpu_ms_per_req": 1000 * cpu / len(records),
        "cpu_pct": 100 * cpu / wall,
        "rps": len(records) / wall,
        "ttft_mean_ms": summary.ttft_mean_ms or 0.0,
        "itl_mean_ms": summary.itl_mean_ms or 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--compare", action="store_true", help="also httpx and raw asyncio")
    parser.add_argument("--requests", type=int, default=1024, help="requests per level (part 1)")
    args = parser.parse_args()
    os.sched_setaffinity(0, {0})
    names = list(CLIENTS) if args.compare else ["servecap(aiohttp)"]
    server, url = start_server(0, 0)
    try:
        print("part 1: zero-delay server, 128 tokens/request, client pinned to one core")
        for name in names:
            for c in (64, 256):
                m = measure(name, url, c, max(1, args.requests // c))
                print(f"  {name:18s} c={c:<4d} cpu/request {m['cpu_ms_per_req']:.2f} ms"
                      f"  requests/s {m['rps']:.0f}")
    finally:
        server.kill()
    server, url = start_server(200, 10)
    try:
        print("part 2: schedule TTFT 200 ms, ITL 10 ms; error of the client's means")
        for name in names:
            for c, per in ((1, 5), (64, 2), (256, 1)):
                m = measure(name, url, c, per)
                print(f"  {name:18s} c={c:<4d} TTFT error {m['ttft_mean_ms'] - 200:+.2f} ms"
                      f"  ITL error {m['itl_mean_ms'] - 10:+.3f} ms"
                      f"  client CPU {m['cpu_pct']:.0f}% of its core")
                if name == CLIENT:
                    print(f"      of the TTFT error: send->server handler "
                          f"{m['to_handler_ms']:.2f} ms, server write->client stamp "
                          f"{m['delivery_ms']:.2f} ms")
    finally:
        server.kill()


if __name__ == "__main__":
    main()
