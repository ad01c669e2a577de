"""A deterministic OpenAI-compatible streaming server with an exact schedule, for tests.

Every streamed request gets its first chunk `ttft_s` after it arrives and one chunk every
`chunk_interval_s` after that, each carrying `tokens_per_chunk` tokens, against absolute
target times (no drift). Runs for real under aiohttp on 127.0.0.1, port 0.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.servers.app_thread import AppThread


@dataclass
class Schedule:
    ttft_s: float = 0.05
    chunk_interval_s: float = 0.01
    tokens_per_chunk: int = 1
    prompt_tokens: int = 100
    per_chunk_usage: bool = False
    model: str = "test-model"


def _chunk(
    model: str, text: str, finish: str | None, usage: dict[str, int] | None, chat: bool = True
) -> bytes:
    choice: dict[str, Any] = {"index": 0, "finish_reason": finish}
    if chat:
        choice["delta"] = {"content": text}
    else:
        choice["text"] = text
    body: dict[str, Any] = {
        "id": "cmpl-test",
        "object": "chat.completion.chunk" if chat else "text_completion",
        "model": model,
        "choices": [choice],
    }
    if usage is not None:
        body["usage"] = usage
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def make_app(schedule: Schedule) -> web.Application:
    async def models(_: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": schedule.model}]})

    async def completions(request: web.Request) -> web.StreamResponse:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        handler_start_ns = time.perf_counter_ns()
        first_write_ns = 0
        body = await request.json()
        chat = request.path.endswith("/chat/completions")
        n_tokens = int(body.get("max_tokens", 16))
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        per = schedule.tokens_per_chunk
        n_chunks = -(-n_tokens // per)
        sent = 0
        for i in range(n_chunks):
            due = t0 + schedule.ttft_s + i * schedule.chunk_interval_s
            delay = due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            k = min(per, n_tokens - sent)
            sent += k
            usage = None
            if schedule.per_chunk_usage:
                usage = {"prompt_tokens": schedule.prompt_tokens, "completion_tokens": sent}
            finish = "length" if sent == n_tokens else None
            chunk = _chunk(schedule.model, " tok" * k, finish, usage, chat)
            first_write_ns = first_write_ns or time.perf_counter_ns()
            await response.write(chunk)
        usage = {"prompt_tokens": schedule.prompt_tokens, "completion_tokens": sent,
                 "total_tokens": schedule.prompt_tokens + sent}
        # perf_counter is CLOCK_MONOTONIC, shared by processes on one machine: the client can
        # tell its own delay from the server's (bench/client_overhead.py does).
        # the final chunk's write is the end of the response (the client reads on to the
        # [DONE] that follows in the same write); its stamp is taken just before it
        timings = {"handler_start_ns": handler_start_ns, "first_write_ns": first_write_ns,
                   "last_write_ns": time.perf_counter_ns()}
        final = {"id": "cmpl-test", "choices": [], "usage": usage, "timings": timings}
        await response.write(b"data: " + json.dumps(final).encode() + b"\n\ndata: [DONE]\n\n")
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/chat/completions", completions)
    app.router.add_post("/v1/completions", completions)
    return app


class ServerThread(AppThread):
    """The schedule server on 127.0.0.1:0 in a background thread."""


def main() -> None:
    """Serve a schedule on 127.0.0.1 (port 0 = any free port; the port goes to stdout)."""
    import argparse

    import uvloop

    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ttft-ms", type=float, default=50)
    parser.add_argument("--interval-ms", type=float, default=10)
    parser.add_argument("--tokens-per-chunk", type=int, default=1)
    parser.add_argument("--per-chunk-usage", action="store_true")
    args = parser.parse_args()
    schedule = Schedule(
        args.ttft_ms / 1000, args.interval_ms / 1000, args.tokens_per_chunk,
        per_chunk_usage=args.per_chunk_usage,
    )
    loop = uvloop.new_event_loop()
    runner = web.AppRunner(make_app(schedule), access_log=None)
    loop.run_until_complete(runner.setup())
    site = web.TCPSite(runner, "127.0.0.1", args.port, backlog=4096)
    loop.run_until_complete(site.start())
    assert site._server is not None
    print(f"PORT {site._server.sockets[0].getsockname()[1]}", flush=True)
    loop.run_forever()


if __name__ == "__main__":
    main()
