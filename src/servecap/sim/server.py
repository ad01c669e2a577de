"""The simulator's ASGI app (starlette): OpenAI-compatible endpoints backed by the model.

Routes: ``GET /v1/models``, ``POST /v1/chat/completions``, ``POST /v1/completions``,
``GET /metrics`` (Prometheus text, vLLM-style names), ``GET /version``, ``GET /health``.
The engine loop starts with the app (lifespan) and stops with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from servecap.sim import SIM_VERSION
from servecap.sim.chunks import ChunkMaker
from servecap.sim.engine_loop import EngineLoop
from servecap.sim.metrics_text import render_metrics
from servecap.sim.openai import BadRequest, SimRequest, parse_request, sse
from servecap.sim.profiles import Profile

DEFAULT_MAX_TOKENS = 128


class SimState:
    """Everything the handlers share: the profile, the time scale and the engine loop."""

    def __init__(self, profile: Profile, time_scale: float, seed: int = 0) -> None:
        self.profile = profile
        self.time_scale = time_scale
        self.loop = EngineLoop(profile.params, time_scale=time_scale, seed=seed)
        self.model_ids = [profile.model_id, profile.name]
        self.started = int(time.time())

    def version(self) -> dict[str, Any]:
        """The /version body: simulator version, profile, deployment, time scale."""
        return {
            "version": SIM_VERSION,
            "server": "servecap-sim",
            "profile": self.profile.name,
            "model": self.profile.model_id,
            "time_scale": self.time_scale,
            "deployment": self.profile.deployment.model_dump(),
            "params": self.profile.params.model_dump(),
        }


def _error(exc: BadRequest) -> JSONResponse:
    return JSONResponse(exc.body(), status_code=exc.status)


async def _stream(state: SimState, req: SimRequest, rid: int, queue: Any) -> AsyncIterator[bytes]:
    maker = ChunkMaker(req, rid, int(time.time()))
    sent = 0
    finished = False
    try:
        if req.chat:
            yield sse(maker.role())
        while not finished:
            em = await queue.get()
            finished = em.done
            yield maker.token_sse(sent, em.tokens, em.done)
            sent += em.tokens
        if req.include_usage:
            yield sse(maker.usage_chunk(sent))
        yield b"data: [DONE]\n\n"
    finally:
        if not finished:
            state.loop.cancel(rid)


async def _whole(state: SimState, req: SimRequest, rid: int, queue: Any) -> dict[str, Any]:
    sent = 0
    try:
        while True:
            em = await queue.get()
            sent += em.tokens
            if em.done:
                return ChunkMaker(req, rid, int(time.time())).whole(sent)
    finally:
        state.loop.cancel(rid)


async def _completion(request: Request, chat: bool) -> Response:
    state: SimState = request.app.state.sim
    try:
        try:
            body = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise BadRequest("request body is not valid JSON") from None
        req = parse_request(
            body, chat, state.model_ids, DEFAULT_MAX_TOKENS, state.profile.reasoning_tokens
        )
    except BadRequest as exc:
        return _error(exc)
    rid, queue = state.loop.submit(req.prompt_tokens, req.max_tokens)
    if req.stream:
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        gen = _stream(state, req, rid, queue)
        return StreamingResponse(gen, media_type="text/event-stream", headers=headers)
    return JSONResponse(await _whole(state, req, rid, queue))


async def chat_completions(request: Request) -> Response:
    """POST /v1/chat/completions."""
    return await _completion(request, chat=True)


async def completions(request: Request) -> Response:
    """POST /v1/completions."""
    return await _completion(request, chat=False)


async def models(request: Request) -> Response:
    """GET /v1/models: the one simulated model, with the profile and time scale."""
    state: SimState = request.app.state.sim
    entry = {
        "id": state.profile.model_id,
        "object": "model",
        "created": state.started,
        "owned_by": "servecap-sim",
        "servecap_sim": {"profile": state.profile.name, "time_scale": state.time_scale},
    }
    return JSONResponse({"object": "list", "data": [entry]})


async def version(request: Request) -> Response:
    """GET /version."""
    return JSONResponse(request.app.state.sim.version())


async def metrics(request: Request) -> Response:
    """GET /metrics in Prometheus text format."""
    state: SimState = request.app.state.sim
    text = render_metrics(state.loop, state.profile.model_id)
    return PlainTextResponse(text, media_type="text/plain; version=0.0.4")


async def health(request: Request) -> Response:
    """GET /health."""
    return PlainTextResponse("ok")


def create_app(profile: Profile, time_scale: float = 1.0, seed: int = 0) -> Starlette:
    """The ASGI app for one profile; the engine task runs during the app's lifespan."""
    state = SimState(profile, time_scale, seed)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        task = asyncio.get_running_loop().create_task(state.loop.run())
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    routes = [
        Route("/v1/models", models, methods=["GET"]),
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/completions", completions, methods=["POST"]),
        Route("/metrics", metrics, methods=["GET"]),
        Route("/version", version, methods=["GET"]),
        Route("/health", health, methods=["GET"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.sim = state
    return app
