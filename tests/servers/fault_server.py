"""A fault-injection OpenAI-compatible streaming server for tests (aiohttp, 127.0.0.1:0).

The fault of each completion request is taken from a server-side queue, in arrival order
(`FaultServer(["ok", "stall", "ok"])`); once the queue is empty every request gets `default`.
The client cannot choose per request, so a test plans the sequence it wants and runs with
concurrency 1 and no warm-up. Every fault is a small coroutine in `FAULTS`; `counts` says
how many completion requests arrived (tests of bad input assert it stays 0).
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.servers.app_thread import AppThread

MODEL = "fault-model"
TOKENS = 4  # content chunks in a normal stream
STALL_S = 30.0  # longer than any test's stall or total timeout

Fault = Callable[[web.Request], Awaitable[web.StreamResponse]]
REDIRECT_TO = web.AppKey("redirect_to", str)


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None,
          usage: dict[str, int] | None = None) -> bytes:
    body: dict[str, Any] = {
        "id": "cmpl-fault", "object": "chat.completion.chunk", "model": MODEL,
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
    }
    if usage is not None:
        body["usage"] = usage
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def usage_chunk(completion: int, prompt: int = 10) -> bytes:
    usage = {"prompt_tokens": prompt, "completion_tokens": completion,
             "total_tokens": prompt + completion}
    return b"data: " + json.dumps({"id": "cmpl-fault", "choices": [], "usage": usage}).encode() \
        + b"\n\n"


DONE = b"data: [DONE]\n\n"


async def open_stream(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    return response


async def write_tokens(response: web.StreamResponse, n: int, key: str = "content") -> None:
    await response.write(chunk({"role": "assistant"}))
    for _ in range(n):
        await response.write(chunk({key: " tok"}))


async def finish(response: web.StreamResponse, *parts: bytes) -> web.StreamResponse:
    for part in parts:
        await response.write(part)
    await response.write_eof()
    return response


async def ok(request: web.Request) -> web.StreamResponse:
    response = await open_stream(request)
    await write_tokens(response, TOKENS)
    return await finish(response, chunk(finish="stop"), usage_chunk(TOKENS), DONE)


async def slow_ok(request: web.Request) -> web.StreamResponse:
    """A normal answer at one token every 100 ms: keeps requests in flight for signals."""
    response = await open_stream(request)
    await response.write(chunk({"role": "assistant"}))
    for _ in range(TOKENS):
        await asyncio.sleep(0.1)
        await response.write(chunk({"content": " tok"}))
    return await finish(response, chunk(finish="stop"), usage_chunk(TOKENS), DONE)


async def reset_mid_stream(request: web.Request) -> web.StreamResponse:
    response = await open_stream(request)
    await write_tokens(response, 2)
    await asyncio.sleep(0.05)  # let the tokens reach the client before the reset
    assert request.transport is not None
    request.transport.abort()
    return response


async def slow_headers(request: web.Request) -> web.StreamResponse:
    await asyncio.sleep(STALL_S)
    return await ok(request)


async def stall_mid_stream(request: web.Request) -> web.StreamResponse:
    response = await open_stream(request)
    await write_tokens(response, 2)
    await asyncio.sleep(STALL_S)
    return await finish(response, DONE)


async def drip_feed(request: web.Request) -> web.StreamResponse:
    """A token every 50 ms for ever: never stalls, but passes any total timeout."""
    response = await open_stream(request)
    await response.write(chunk({"role": "assistant"}))
    for _ in range(int(STALL_S / 0.05)):
        await response.write(chunk({"content": " drip"}))
        await asyncio.sleep(0.05)
    return await finish(response, DONE)


async def truncated(request: web.Request) -> web.StreamResponse:
    response = await open_stream(request)
    await write_tokens(response, 2)
    return await finish(response)


async def finish_without_done(request: web.Request) -> web.StreamResponse:
    response = await open_stream(request)
    await write_tokens(response, TOKENS)
    return await finish(response, chunk(finish="stop"), usage_chunk(TOKENS))


async def non_json_line(request: web.Request) -> web.StreamResponse:
    response = await open_stream(request)
    await write_tokens(response, 1)
    return await finish(response, b"data: {not json at all\n\n", DONE)


async def html_200(request: web.Request) -> web.StreamResponse:
    return web.Response(text="<html><body>login</body></html>", content_type="text/html")


async def json_200(request: web.Request) -> web.StreamResponse:
    return web.json_response({"id": "x", "choices": [{"message": {"content": "hi"}}]})


async def error_in_stream(request: web.Request) -> web.StreamResponse:
    response = await open_stream(request)
    await write_tokens(response, 1)
    error = {"error": {"message": "engine overloaded", "type": "server_error"}}
    return await finish(response, b"data: " + json.dumps(error).encode() + b"\n\n", DONE)


def http_error(status: int, headers: dict[str, str] | None = None) -> Fault:
    async def handler(request: web.Request) -> web.StreamResponse:
        body = {"error": {"message": f"status {status}", "code": status}}
        return web.json_response(body, status=status, headers=headers)

    return handler


async def echo_secrets(request: web.Request) -> web.StreamResponse:
    """401 whose body echoes every request header, as careless gateways do."""
    echoed = {k: v for k, v in request.headers.items()}
    return web.json_response({"error": {"message": f"bad credentials: {echoed}"}}, status=401)


async def echo_secrets_in_stream(request: web.Request) -> web.StreamResponse:
    response = await open_stream(request)
    await write_tokens(response, 1)
    error = {"error": {"message": f"auth: {request.headers.get('Authorization')}"}}
    return await finish(response, b"data: " + json.dumps(error).encode() + b"\n\n", DONE)


async def echo_token(request: web.Request) -> web.StreamResponse:
    """401 that names the credential without its scheme (`invalid token abc`)."""
    token = request.headers.get("Authorization", "").partition(" ")[2]
    return web.json_response({"error": {"message": f"invalid token {token}"}}, status=401)


async def echo_token_in_stream(request: web.Request) -> web.StreamResponse:
    response = await open_stream(request)
    await write_tokens(response, 1)
    token = request.headers.get("Authorization", "").partition(" ")[2]
    error = {"error": {"message": f"token {token} expired"}}
    return await finish(response, b"data: " + json.dumps(error).encode() + b"\n\n", DONE)


async def redirect_307(request: web.Request) -> web.StreamResponse:
    """A redirect to `redirect_to` (another origin); a benchmark must not follow it."""
    target = request.app[REDIRECT_TO] + request.path
    return web.Response(status=307, headers={"Location": target})


async def huge_line(request: web.Request) -> web.StreamResponse:
    """5 MiB without a line end: over the decoder's 4 MiB line cap."""
    response = await open_stream(request)
    await write_tokens(response, 1)
    await response.write(b"data: " + b"x" * (5 * 1024 * 1024))
    return await finish(response, b"\n\n", DONE)


async def utf8_split(request: web.Request) -> web.StreamResponse:
    """Multi-byte characters cut across writes (one byte a write)."""
    response = await open_stream(request)
    raw = chunk({"content": "héllo 世界 🙂"})
    for i in range(len(raw)):
        await response.write(raw[i:i + 1])
    return await finish(response, chunk(finish="stop"), usage_chunk(1), DONE)


async def invalid_utf8(request: web.Request) -> web.StreamResponse:
    response = await open_stream(request)
    bad = b'data: {"choices":[{"index":0,"delta":{"content":"ab\xff\xfe"}}]}\n\n'
    return await finish(response, bad, chunk(finish="stop"), usage_chunk(1), DONE)


async def usage_missing(request: web.Request) -> web.StreamResponse:
    response = await open_stream(request)
    await write_tokens(response, TOKENS)
    return await finish(response, chunk(finish="stop"), DONE)


async def zero_tokens(request: web.Request) -> web.StreamResponse:
    response = await open_stream(request)
    await response.write(chunk({"role": "assistant"}))
    return await finish(response, chunk({"content": ""}, finish="stop"), usage_chunk(0), DONE)


async def negative_usage(request: web.Request) -> web.StreamResponse:
    response = await open_stream(request)
    await write_tokens(response, TOKENS)
    return await finish(response, chunk(finish="stop"), usage_chunk(-50, prompt=-7), DONE)


async def reasoning_only(request: web.Request) -> web.StreamResponse:
    response = await open_stream(request)
    await write_tokens(response, TOKENS, key="reasoning_content")
    return await finish(response, chunk(finish="length"), usage_chunk(TOKENS), DONE)


async def drop_after_read(request: web.Request) -> web.StreamResponse:
    """Reads the whole request, then closes the connection without a byte of answer: a
    server fault, never to be sent again by the client (it reached the server)."""
    assert request.transport is not None
    request.transport.close()
    return web.Response()


async def ok_then_close(request: web.Request) -> web.StreamResponse:
    """llama-server's habit: keep-alive advertised, the connection closed after the stream.
    The last bytes and the FIN leave in one segment (TCP_CORK, then shutdown), as a server
    that closes right after writing sends them, so the client sees the close with the data."""
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Connection": "keep-alive"}
    )
    await response.prepare(request)
    await write_tokens(response, TOKENS)
    transport = request.transport
    assert transport is not None
    sock = transport.get_extra_info("socket")
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
    await finish(response, chunk(finish="stop"), usage_chunk(TOKENS), DONE)
    transport.write_eof()
    transport.close()
    return response


async def tool_call_only(request: web.Request) -> web.StreamResponse:
    response = await open_stream(request)
    await response.write(chunk({"role": "assistant"}))
    for i, args in enumerate(('{"ci', 'ty": ', '"Oslo"}')):
        call: dict[str, Any] = {"index": 0, "function": {"arguments": args}}
        if i == 0:
            call.update(id="call_1", type="function")
            call["function"]["name"] = "weather"
        await response.write(chunk({"tool_calls": [call]}))
    return await finish(response, chunk(finish="tool_calls"), usage_chunk(3), DONE)


FAULTS: dict[str, Fault] = {
    "ok": ok,
    "slow_ok": slow_ok,
    "reset_mid_stream": reset_mid_stream,
    "slow_headers": slow_headers,
    "stall_mid_stream": stall_mid_stream,
    "drip_feed": drip_feed,
    "truncated": truncated,
    "finish_without_done": finish_without_done,
    "non_json_line": non_json_line,
    "html_200": html_200,
    "json_200": json_200,
    "error_in_stream": error_in_stream,
    "http_400": http_error(400),
    "http_401": http_error(401),
    "http_404": http_error(404),
    "http_429": http_error(429, {"Retry-After": "7"}),
    "http_500": http_error(500),
    "http_503": http_error(503, {"Retry-After": "2"}),
    "huge_line": huge_line,
    "echo_secrets": echo_secrets,
    "echo_secrets_in_stream": echo_secrets_in_stream,
    "echo_token": echo_token,
    "echo_token_in_stream": echo_token_in_stream,
    "redirect_307": redirect_307,
    "utf8_split": utf8_split,
    "invalid_utf8": invalid_utf8,
    "usage_missing": usage_missing,
    "zero_tokens": zero_tokens,
    "reasoning_only": reasoning_only,
    "negative_usage": negative_usage,
    "tool_call_only": tool_call_only,
    "drop_after_read": drop_after_read,
    "ok_then_close": ok_then_close,
}


@dataclass
class FaultServer:
    """Serves `/v1/models` (ids from `models`) and faulty completions, in queue order."""

    queue: list[str] = field(default_factory=list)
    default: str = "ok"
    models: list[str] = field(default_factory=lambda: [MODEL])
    version: dict[str, Any] | None = None  # served at /version when set
    echo_info: bool = False  # /version and /v1/models echo the request's headers
    echo_metrics: bool = False  # /metrics labels echo the request's headers (a gateway's)
    models_body: bytes | None = None  # served verbatim as /v1/models when set
    redirect_to: str = ""  # the origin `redirect_307` sends clients to
    completions: int = 0
    seen_headers: list[dict[str, str]] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # the fault of each request read, in order

    def next_fault(self) -> Fault:
        """Called once a completion request was read in full: it counts as received."""
        self.completions += 1
        name = self.queue.pop(0) if self.queue else self.default
        self.log.append(name)
        return FAULTS[name]

    def app(self) -> web.Application:
        async def models(request: web.Request) -> web.Response:
            self.seen_headers.append(dict(request.headers))
            if self.models_body is not None:
                return web.Response(body=self.models_body, content_type="application/json")
            ids = list(self.models)
            if self.echo_info:  # a careless gateway lists what it was sent
                ids += [f"{k}: {v}" for k, v in request.headers.items()]
            return web.json_response({"object": "list", "data": [{"id": m} for m in ids]})

        async def completions(request: web.Request) -> web.StreamResponse:
            self.seen_headers.append(dict(request.headers))
            await request.read()
            return await self.next_fault()(request)

        async def version(request: web.Request) -> web.Response:
            if self.echo_info:
                return web.json_response({"version": "1", "headers": dict(request.headers)})
            if self.version is None:
                raise web.HTTPNotFound()
            return web.json_response(self.version)

        async def metrics(request: web.Request) -> web.Response:
            labels = ",".join(f'h{i}="{v}"' for i, v in enumerate(request.headers.values())
                              if '"' not in v and "\\" not in v)
            text = (f"vllm:num_requests_running{{{labels}}} 1\n"
                    f"vllm:num_requests_waiting{{path=\"{request.path_qs}\"}} 0\n")
            return web.Response(text=text, content_type="text/plain")

        app = web.Application()
        app[REDIRECT_TO] = self.redirect_to
        if self.echo_metrics:  # a test may route /metrics itself
            app.router.add_get("/metrics", metrics)
        app.router.add_get("/v1/models", models)
        app.router.add_get("/version", version)
        app.router.add_post("/v1/chat/completions", completions)
        app.router.add_post("/v1/completions", completions)
        return app


class FaultServerThread(AppThread):
    """Runs a FaultServer on 127.0.0.1:0 (optionally TLS) in a thread with its own loop."""

    def __init__(self, server: FaultServer, ssl_context: ssl.SSLContext | None = None) -> None:
        super().__init__(
            server.app(), ssl_context, handler_cancellation=True, shutdown_timeout=0.5
        )
        self.server = server


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
