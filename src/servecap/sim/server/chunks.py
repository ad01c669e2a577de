"""Build the OpenAI response objects (stream chunks and whole responses) for one request."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from servecap.sim.server.openai import WORDS, SimRequest, split_reasoning, sse, token_text, usage
from servecap.sim.server.tool_calls import arguments, call_delta, whole_call


@lru_cache(maxsize=4096)
def _text_json(phase: int, n: int) -> bytes:
    """The JSON string of ``n`` tokens from word ``phase`` (the text repeats every
    ``len(WORDS)`` tokens, so a small cache covers every chunk)."""
    return json.dumps(token_text(phase, n)).encode()


_FINISH = ((False, "null"), (True, '"length"'))


class ChunkMaker:
    """Chunks for one request: chat (``delta``) or completions (``text``) shape."""

    __slots__ = (
        "_cache",
        "_head",
        "_tail",
        "_templated_from",
        "_wire",
        "args",
        "created",
        "id",
        "obj",
        "req",
        "rid",
    )

    def __init__(
        self, req: SimRequest, rid: int, created: int, wire: Callable[[bytes], bytes] = bytes
    ) -> None:
        self.req = req
        self.rid = rid
        # a tool-call answer's arguments are its tokens (`tool_calls`)
        self.args = arguments(req.max_tokens) if req.tool_call else ""
        self._wire = wire  # how a chunk goes on the wire (the HTTP layer's framing)
        self.id = f"{'chatcmpl' if req.chat else 'cmpl'}-sim-{rid}"
        self.created = created
        self.obj = "chat.completion.chunk" if req.chat else "text_completion"
        env = json.dumps(self._envelope([]), separators=(",", ":"))
        field = '"delta":{"content":' if req.chat else '"text":'
        head = "data: " + env[: -len("[]}")] + '[{"index":0,' + field
        mid = ("}" if req.chat else "") + ',"logprobs":null,"finish_reason":'
        self._head = head.encode()
        self._tail = {last: f"{mid}{finish}}}]}}\n\n".encode() for last, finish in _FINISH}
        # chunks before this token are built in full (reasoning, per-chunk usage); from it on
        # they come from the template, and a non-final chunk on the wire from a per-request
        # cache: the text repeats every len(WORDS) tokens, so a request builds at most that
        # many (the simulator's hot path: a cached chunk is one dict lookup)
        templated = not (req.continuous_usage or req.tool_call)
        self._templated_from = req.reasoning_tokens if templated else math.inf
        self._cache: dict[int, bytes] = {}

    def _envelope(self, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": self.obj,
            "created": self.created,
            "model": self.req.model,
            "choices": choices,
        }

    def role(self) -> dict[str, Any]:
        """The opening chat chunk: role only, carries no token."""
        choice = {
            "index": 0,
            "delta": {"role": "assistant", "content": ""},
            "logprobs": None,
            "finish_reason": None,
        }
        return self._envelope([choice])

    def tokens(self, start: int, n: int, last: bool) -> dict[str, Any]:
        """A chunk carrying output tokens ``start .. start + n - 1``."""
        reasoning, answer = split_reasoning(self.req, start, n)
        choice: dict[str, Any] = {"index": 0}
        if self.req.tool_call:
            choice["delta"] = call_delta(self.rid, self.req.tool_call, self.args, start, n)
        elif self.req.chat:
            delta: dict[str, Any] = {}
            if reasoning:
                delta["reasoning_content"] = reasoning
            if answer or not reasoning:
                delta["content"] = answer
            choice["delta"] = delta
        else:
            choice["text"] = answer
        choice["logprobs"] = None
        choice["finish_reason"] = self._finish() if last else None
        chunk = self._envelope([choice])
        if self.req.continuous_usage:
            chunk["usage"] = usage(self.req.prompt_tokens, start + n)
        return chunk

    def token_sse(self, start: int, n: int, last: bool) -> bytes:
        """``sse(self.tokens(...))``, built from a template on the common path (fast)."""
        if start < self._templated_from:
            return sse(self.tokens(start, n, last))
        return self._head + _text_json(start % len(WORDS), n) + self._tail[last]

    def wire_chunk(self, start: int, n: int) -> bytes:
        """A chunk that is not the last, as it goes on the wire (``wire(token_sse(...))``)."""
        if start < self._templated_from:
            return self._wire(sse(self.tokens(start, n, False)))
        key = n * len(WORDS) + start % len(WORDS)
        data = self._cache.get(key)
        if data is None:
            data = self._cache[key] = self._wire(self.token_sse(start, n, False))
        return data

    def _finish(self) -> str:
        """Why the answer ended: always at max_tokens, as a call when it is one."""
        return "tool_calls" if self.req.tool_call else "length"

    def usage_chunk(self, completion: int, cached: int | None = None) -> dict[str, Any]:
        """The final ``include_usage`` chunk: empty choices plus usage."""
        chunk = self._envelope([])
        chunk["usage"] = usage(self.req.prompt_tokens, completion, cached)
        return chunk

    def whole(self, completion: int, cached: int | None = None) -> dict[str, Any]:
        """The non-streaming response."""
        reasoning, answer = split_reasoning(self.req, 0, completion)
        choice: dict[str, Any] = {"index": 0}
        if self.req.chat:
            message: dict[str, Any] = {"role": "assistant", "content": answer}
            if reasoning:
                message["reasoning_content"] = reasoning
            if self.req.tool_call:
                message["content"] = None
                message["tool_calls"] = whole_call(self.rid, self.req.tool_call, self.args)
            choice["message"] = message
        else:
            choice["text"] = answer
        choice["logprobs"] = None
        choice["finish_reason"] = self._finish()
        body = self._envelope([choice])
        body["object"] = "chat.completion" if self.req.chat else "text_completion"
        body["usage"] = usage(self.req.prompt_tokens, completion, cached)
        return body
