"""The simulator's OpenAI-compatible endpoints, backed by the engine loop.

Routes: ``GET /v1/models``, ``POST /v1/chat/completions``, ``POST /v1/completions``,
``GET /metrics`` (Prometheus text, vLLM-style names), ``GET /dcgm`` (a DCGM exporter's power
and energy, from the batch: ``server.power``), ``GET /version``, ``GET /health``, and
the prefix-cache resets of vLLM (``POST /reset_prefix_cache``) and SGLang (``POST
/flush_cache``), which empty the cache of every block no running request holds.
A streamed request registers a ``StreamSink`` with the engine loop, which writes each chunk
as the engine emits it, into the step's write batch (see ``http11`` and ``wire`` for why).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import random
import time
from collections.abc import Callable
from typing import Any

from servecap.sim.model.blocks import block_hashes
from servecap.sim.model.emissions import Emission
from servecap.sim.profiles import Profile
from servecap.sim.server.chunks import ChunkMaker
from servecap.sim.server.engine_loop import EngineLoop
from servecap.sim.server.http11 import HttpRequest, Responder
from servecap.sim.server.metrics_text import render_metrics
from servecap.sim.server.openai import BadRequest, SimRequest, parse_request, sse
from servecap.sim.server.power import PowerMeter, PowerModel, render_dcgm
from servecap.sim.server.tool_calls import call_name
from servecap.sim.server.wire import WriteBatch

DEFAULT_MAX_TOKENS = 128
SIM_VERSION = "0.1.0"
JSON = "application/json"
DONE = b"data: [DONE]\n\n"


def _json(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


class SimState:
    """Everything the handlers share: the profile, the time scale and the engine loop."""

    def __init__(self, profile: Profile, time_scale: float, seed: int = 0) -> None:
        self.profile = profile
        self.time_scale = time_scale
        self.batch = WriteBatch()  # the engine loop batches each step's writes
        self.loop = EngineLoop(profile.params, time_scale, seed, self.batch)
        self.model_ids = [profile.model_id, profile.name]
        self.started = int(time.time())
        self.tool_rng = random.Random(seed)  # which `auto` requests get a tool call

    def with_tool_call(self, req: SimRequest, body: dict[str, Any]) -> SimRequest:
        """`req` answered with a tool call where its tools and `tool_choice` ask for one
        (`tool_calls`): then its tokens are the call's, with no reasoning."""
        if not req.chat:
            return req
        name = call_name(body, self.profile.tool_call_probability, self.tool_rng)
        return dataclasses.replace(req, tool_call=name, reasoning_tokens=0) if name else req

    def blocks_of(self, req: SimRequest) -> tuple[int, ...]:
        """The prompt's prefix-cache block hashes; none when the profile caches nothing."""
        params = self.profile.params
        if not params.prefix_caching:
            return ()
        return block_hashes(req.prompt, params.prefix_block_tokens)

    def cached_of(self, rid: int) -> int | None:
        """Request ``rid``'s cached prompt tokens for its usage; None (no
        ``prompt_tokens_details``) when the profile caches nothing, as vLLM without
        prefix caching reports none. Read once, as the request ends."""
        cached = self.loop.cached_tokens(rid)
        return cached if self.profile.params.prefix_caching else None

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
            # the profile's fit and held-out error: a report labels simulated numbers by it
            "calibration": dict(self.profile.calibration),
        }


class StreamSink:
    """Writes one streamed request's chunks as the engine emits them.

    Created as the request enters the engine, it sends the response head at once and, for
    chat, the role chunk (which carries no token)."""

    __slots__ = ("_cached", "_maker", "_req", "_responder", "_sent")

    def __init__(
        self, req: SimRequest, responder: Responder, rid: int, cached: Callable[[], int | None]
    ) -> None:
        self._req = req
        self._cached = cached
        self._responder = responder
        self._maker = ChunkMaker(req, rid, int(time.time()), wire=responder.frame)
        self._sent = 0
        responder.start_stream(200, "text/event-stream")
        if req.chat:
            responder.write_chunk(sse(self._maker.role()))

    def emit(self, em: Emission) -> None:
        """One emission: a chunk of tokens; the last also brings usage and ``[DONE]``."""
        start = self._sent
        self._sent = start + em.tokens
        if not em.done:  # the hot path: a cached, framed chunk
            self._responder.write_framed(self._maker.wire_chunk(start, em.tokens))
            return
        data = self._maker.token_sse(start, em.tokens, True)
        cached = self._cached()  # read (and forgotten) whether or not usage is asked for
        if self._req.include_usage:
            data += sse(self._maker.usage_chunk(self._sent, cached))
        self._responder.end_stream(data + DONE)


class WholeSink:
    """Collects a non-streamed request's tokens and answers once it is done."""

    def __init__(
        self, req: SimRequest, responder: Responder, rid: int, cached: Callable[[], int | None]
    ) -> None:
        self._req = req
        self._cached = cached
        self._responder = responder
        self._rid = rid
        self._sent = 0

    def emit(self, em: Emission) -> None:
        """Count the tokens; send the whole response with the last of them."""
        self._sent += em.tokens
        if em.done:
            maker = ChunkMaker(self._req, self._rid, int(time.time()))
            body = maker.whole(self._sent, self._cached())
            self._responder.send(200, JSON, _json(body))


class SimApp:
    """The request handler for ``http11``: routes to the endpoints below."""

    def __init__(
        self, profile: Profile, time_scale: float = 1.0, seed: int = 0,
        power: PowerModel | None = None,
    ) -> None:
        self.state = SimState(profile, time_scale, seed)
        self.power = PowerMeter(power or PowerModel())
        self.state.loop.on_batch = self.power.update
        self._engine_task: asyncio.Task[None] | None = None
        self._get: dict[str, Callable[[], tuple[str, bytes]]] = {
            "/v1/models": self._models,
            "/version": lambda: (JSON, _json(self.state.version())),
            "/metrics": self._metrics,
            "/dcgm": lambda: ("text/plain; version=0.0.4", render_dcgm(self.power).encode()),
            "/health": lambda: ("text/plain", b"ok"),
        }
        # vLLM's (dev mode) and SGLang's prefix-cache resets
        self._post: dict[str, Callable[[], tuple[str, bytes]]] = {
            "/reset_prefix_cache": self._reset,
            "/flush_cache": self._reset,
        }

    def start(self) -> None:
        """Start the engine loop on the running event loop."""
        self._engine_task = asyncio.get_running_loop().create_task(self.state.loop.run())

    async def stop(self) -> None:
        """Stop the engine loop."""
        if self._engine_task is not None:
            self._engine_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._engine_task

    def __call__(self, request: HttpRequest, responder: Responder) -> None:
        path = request.path.rstrip("/") or "/"
        if path in ("/v1/chat/completions", "/v1/completions"):
            if request.method != "POST":
                _error(responder, BadRequest("method not allowed; use POST", 405))
                return
            self._completion(request.body, path.endswith("chat/completions"), responder)
        elif path in self._post:
            if request.method != "POST":
                _error(responder, BadRequest("method not allowed; use POST", 405))
                return
            responder.send(200, *self._post[path]())
        elif path in self._get:
            if request.method != "GET":
                _error(responder, BadRequest("method not allowed; use GET", 405))
                return
            responder.send(200, *self._get[path]())
        else:
            _error(responder, BadRequest(f"no route {path}", 404, "not_found"))

    def _completion(self, raw: bytes, chat: bool, responder: Responder) -> None:
        state = self.state
        try:
            try:
                body = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise BadRequest("request body is not valid JSON") from None
            req = parse_request(
                body, chat, state.model_ids, DEFAULT_MAX_TOKENS, state.profile.reasoning_tokens
            )
            req = state.with_tool_call(req, body)
        except BadRequest as exc:
            _error(responder, exc)
            return
        sink = StreamSink if req.stream else WholeSink
        rid = state.loop.submit(
            req.prompt_tokens,
            req.max_tokens,
            lambda rid: sink(req, responder, rid, lambda: state.cached_of(rid)),
            state.blocks_of(req),
        )
        responder.on_close = lambda: state.loop.cancel(rid)

    def _models(self) -> tuple[str, bytes]:
        state = self.state
        entry = {
            "id": state.profile.model_id,
            "object": "model",
            "created": state.started,
            "owned_by": "servecap-sim",
            "servecap_sim": {"profile": state.profile.name, "time_scale": state.time_scale},
        }
        return JSON, _json({"object": "list", "data": [entry]})

    def _reset(self) -> tuple[str, bytes]:
        dropped = self.state.loop.reset_prefix_cache()
        return "text/plain", f"prefix cache reset: {dropped} blocks dropped".encode()

    def _metrics(self) -> tuple[str, bytes]:
        text = render_metrics(self.state.loop, self.state.profile.model_id)
        return "text/plain; version=0.0.4", text.encode()


def _error(responder: Responder, exc: BadRequest) -> None:
    responder.send(exc.status, JSON, _json(exc.body()))
