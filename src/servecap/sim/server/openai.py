"""OpenAI wire shapes for the simulator: request parsing, token counting, chunks, errors.

Pure functions over dicts and bytes; the server wires them to HTTP.

Prompt tokens are counted by one fixed rule: ``ceil(characters / 4)``, minimum 1, where
characters are the Unicode code points of all message text contents joined (chat: with each
assistant turn's tool-call arguments after its content) or of the prompt strings
(completions); a prompt given as token ids counts one token per id. The same
text (message contents concatenated in order) or ids are the request's ``prompt``, which the
prefix cache hashes in blocks (``blocks``).
The simulator ignores EOS: it always generates exactly ``max_tokens`` tokens
(``finish_reason`` is ``"length"``), so ``ignore_eos`` is accepted and has no effect.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from servecap.sim.model.blocks import CHARS_PER_TOKEN
from servecap.sim.server.tool_calls import arguments_text

WORDS: tuple[str, ...] = (
    " the",
    " model",
    " is",
    " simulated",
    " and",
    " every",
    " token",
    " costs",
    " time",
    " in",
    " a",
    " batch",
    " of",
    " requests",
    " served",
    " here",
)


class BadRequest(Exception):
    """A request the API rejects; carries the HTTP status and OpenAI error fields."""

    def __init__(self, message: str, status: int = 400, code: str = "invalid_request") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code

    def body(self) -> dict[str, Any]:
        """The OpenAI-style error object."""
        kind = "invalid_request_error" if self.status < 500 else "server_error"
        if self.status == 404:
            kind = "NotFoundError"
        return {"error": {"message": self.message, "type": kind, "code": self.code}}


@dataclass(frozen=True)
class SimRequest:
    """The parts of a request the simulator acts on."""

    chat: bool
    model: str
    prompt_tokens: int
    max_tokens: int
    stream: bool
    include_usage: bool
    continuous_usage: bool
    reasoning_tokens: int
    # the prompt as counted: its text (chat: message contents concatenated) or token ids
    prompt: str | tuple[int, ...] = ""
    # the function the answer calls (`tool_calls.call_name`), None for a text answer
    tool_call: str | None = None


def count_tokens(text_chars: int) -> int:
    """The documented prompt-token rule: ceil(chars / 4), at least 1."""
    return max(1, math.ceil(text_chars / CHARS_PER_TOKEN))


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    raise BadRequest("message content must be a string, a list of parts or null")


def _chat_prompt(body: dict[str, Any]) -> str:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' is required and must be a non-empty list", code="missing")
    texts: list[str] = []
    for msg in messages:
        if not isinstance(msg, dict) or not isinstance(msg.get("role"), str):
            raise BadRequest("each message must be an object with a string 'role'")
        texts.append(_content_text(msg.get("content")))
        texts.append(arguments_text(msg))
    return "".join(texts)


def _completion_prompt(body: dict[str, Any]) -> str | tuple[int, ...]:
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, list) and prompt:
        if all(isinstance(p, str) for p in prompt):
            return "".join(prompt)
        if all(isinstance(p, int) for p in prompt):
            return tuple(prompt)
    raise BadRequest("'prompt' is required: a string, a list of strings or of token ids")


def prompt_token_count(prompt: str | tuple[int, ...]) -> int:
    """Prompt tokens of a parsed prompt: the characters rule for text, one per token id."""
    return count_tokens(len(prompt)) if isinstance(prompt, str) else len(prompt)


def _int_field(body: dict[str, Any], name: str, low: int) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise BadRequest(f"'{name}' must be an integer >= {low}")
    return value


def parse_request(
    body: Any, chat: bool, model_ids: list[str], default_max_tokens: int, reasoning: int
) -> SimRequest:
    """Validate a decoded JSON body; raises ``BadRequest`` (400/404) with a clear message.

    ``model_ids[0]`` is the model answered when a request names none."""
    if not isinstance(body, dict):
        raise BadRequest("request body must be a JSON object")
    model = body.get("model", model_ids[0])
    if model not in model_ids:
        raise BadRequest(f"The model `{model}` does not exist.", 404, "model_not_found")
    prompt = _chat_prompt(body) if chat else _completion_prompt(body)
    max_tokens = _int_field(body, "max_completion_tokens", 1)
    if max_tokens is None:
        max_tokens = _int_field(body, "max_tokens", 1) or default_max_tokens
    if (_int_field(body, "n", 1) or 1) != 1:
        raise BadRequest("the simulator supports only n = 1")
    opts = body.get("stream_options") or {}
    if not isinstance(opts, dict):
        raise BadRequest("'stream_options' must be an object")
    req_reasoning = _int_field(body, "reasoning_tokens", 0)
    return SimRequest(
        chat=chat,
        model=str(model),
        prompt_tokens=prompt_token_count(prompt),
        max_tokens=max_tokens,
        stream=bool(body.get("stream", False)),
        include_usage=bool(opts.get("include_usage", False)),
        continuous_usage=bool(opts.get("continuous_usage_stats", False)),
        reasoning_tokens=(reasoning if req_reasoning is None else req_reasoning) if chat else 0,
        prompt=prompt,
    )


def token_text(start: int, n: int) -> str:
    """The text of output tokens ``start .. start + n - 1`` (one word per token)."""
    return "".join(WORDS[i % len(WORDS)] for i in range(start, start + n))


def usage(prompt: int, completion: int, cached: int | None = None) -> dict[str, Any]:
    """An OpenAI usage object; with ``cached`` (a prefix-caching profile), the prompt tokens
    the cache served in ``prompt_tokens_details``, as vLLM (``--enable-prompt-tokens-details``),
    SGLang and OpenAI report them."""
    out: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cached is not None:
        out["prompt_tokens_details"] = {"cached_tokens": cached}
    return out


def split_reasoning(req: SimRequest, start: int, n: int) -> tuple[str, str]:
    """(reasoning text, answer text) for tokens ``start .. start + n - 1``."""
    r_end = min(start + n, req.reasoning_tokens)
    r_n = max(0, r_end - start)
    return token_text(start, r_n), token_text(start + r_n, n - r_n)


def sse(obj: dict[str, Any] | str) -> bytes:
    """One server-sent event line pair."""
    data = obj if isinstance(obj, str) else json.dumps(obj, separators=(",", ":"))
    return f"data: {data}\n\n".encode()
