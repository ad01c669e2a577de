"""The simulator's tool calls: when it answers with one, and what the call looks like.

A chat request that carries `tools` is answered with one tool call instead of text when its
`tool_choice` is `"required"` or names a function (the marker a client can set), or, under
`"auto"` (or none given), with the profile's `tool_call_probability` (drawn per request from
the server's seeded generator); `"none"` never calls a tool. The call names the function
`tool_choice` named, else the catalogue's first.

The call's arguments are its output tokens: ``max_tokens`` tokens of exactly 4 characters
each (``CHARS_PER_TOKEN``), a JSON object ``{"q":"..."}`` (one token: ``{}`` and two
spaces). A later request that sends the call back in an assistant turn has its arguments
counted as prompt text (`openai._chat_prompt`), so the call's tokens come back as exactly as
many prompt tokens, and the prefix cache sees the turn as part of the growing prefix.
"""

from __future__ import annotations

import random
from typing import Any

from servecap.sim.model.blocks import CHARS_PER_TOKEN

FILLER = "tool"  # 4 characters: the arguments' body repeats it


def tool_names(body: dict[str, Any]) -> tuple[str, ...]:
    """The function names of a request's `tools` (malformed entries are skipped)."""
    tools = body.get("tools")
    if not isinstance(tools, list):
        return ()
    names = []
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if isinstance(name, str) and name:
            names.append(name)
    return tuple(names)


def choice_of(body: dict[str, Any]) -> tuple[str, str | None]:
    """`tool_choice` as (mode, named function): mode is auto, none, required or named."""
    choice = body.get("tool_choice", "auto")
    if isinstance(choice, dict):
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else None
        return ("named", name) if isinstance(name, str) else ("auto", None)
    return (choice, None) if choice in ("auto", "none", "required") else ("auto", None)


def call_name(body: dict[str, Any], probability: float, rng: random.Random) -> str | None:
    """The function the answer calls, or None for a text answer."""
    names = tool_names(body)
    if not names:
        return None
    mode, named = choice_of(body)
    if mode == "none":
        return None
    if mode == "auto" and not rng.random() < probability:
        return None
    return named if mode == "named" and named else names[0]


def arguments(max_tokens: int) -> str:
    """The call's whole arguments text: `max_tokens` tokens of 4 characters each."""
    chars = max_tokens * CHARS_PER_TOKEN
    if max_tokens < 2:
        return "{}".ljust(chars)
    body = (FILLER * max_tokens)[: chars - len('{"q":""}')]
    return '{"q":"' + body + '"}'


def call_delta(rid: int, name: str, args: str, start: int, n: int) -> dict[str, Any]:
    """The `delta` of a chunk carrying output tokens start .. start + n - 1 of the call."""
    piece = args[start * CHARS_PER_TOKEN: (start + n) * CHARS_PER_TOKEN]
    call: dict[str, Any] = {"index": 0, "function": {"arguments": piece}}
    if start == 0:  # the first piece names the call
        call.update(id=f"call_sim_{rid}", type="function")
        call["function"] = {"name": name, "arguments": piece}
    return {"tool_calls": [call]}


def whole_call(rid: int, name: str, args: str) -> list[dict[str, Any]]:
    """The non-streamed message's `tool_calls`."""
    return [{"id": f"call_sim_{rid}", "type": "function",
             "function": {"name": name, "arguments": args}}]


def arguments_text(message: dict[str, Any]) -> str:
    """An assistant turn's tool-call arguments, concatenated: prompt text for counting."""
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return ""
    parts = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        args = function.get("arguments") if isinstance(function, dict) else None
        if isinstance(args, str):
            parts.append(args)
    return "".join(parts)
