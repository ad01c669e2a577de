"""Tool calls on the wire, sans-I/O: the chat turns an agent adds, the catalogue it sends,
and the collector of a streamed answer's tool-call deltas.

An agent's conversation holds turns a plain `datasets.Message` cannot: an assistant turn
that asked for tools (`tool_calls`) and the `tool` turns that answer it (`tool_call_id`).
They are a type of their own (`ToolTurn`) rather than fields added to `Message`, whose rows
are built with `tuple.__new__` on a hot path and would lack the added fields.

A catalogue (`--tools FILE`) is a JSON list of OpenAI tools, each
`{"type": "function", "function": {"name": ..., ...}}`; `parse_tools` refuses anything else
with one message that names the setting.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from servecap.core.errors import bad_setting


class ToolCall(NamedTuple):
    """One call a model asked for: its id, the function's name and its arguments (JSON text)."""

    id: str
    name: str
    arguments: str


class ToolTurn(NamedTuple):
    """A chat turn of a tool loop: an assistant turn that asked for `tool_calls`, or a
    `tool` turn answering the call `tool_call_id`."""

    role: str
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None


def turn_json(turn: ToolTurn) -> dict[str, Any]:
    """The turn as an OpenAI chat message."""
    out: dict[str, Any] = {"role": turn.role, "content": turn.content}
    if turn.tool_calls:
        # an assistant turn that only called tools has no text: OpenAI's shape is null
        out["content"] = turn.content or None
        out["tool_calls"] = [
            {"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": c.arguments}}
            for c in turn.tool_calls
        ]
    if turn.tool_call_id is not None:
        out["tool_call_id"] = turn.tool_call_id
    return out


class ToolCallLog:
    """Collects the tool calls of one streamed answer from its `delta.tool_calls` pieces:
    each piece names its call by `index`; the first carries the id and the name, the
    rest carry more of the arguments."""

    __slots__ = ("_parts",)

    def __init__(self) -> None:
        self._parts: dict[int, list[str]] = {}

    def add(self, deltas: Any) -> None:
        """Apply one chunk's `tool_calls` (server data: anything malformed is skipped)."""
        if type(deltas) is not list:
            return
        for delta in deltas:
            if type(delta) is not dict:
                continue
            index = delta.get("index", 0)
            parts = self._parts.setdefault(index if type(index) is int else 0, ["", "", ""])
            if type(delta.get("id")) is str:
                parts[0] = delta["id"]
            function = delta.get("function")
            if type(function) is dict:
                if type(function.get("name")) is str:
                    parts[1] += function["name"]
                if type(function.get("arguments")) is str:
                    parts[2] += function["arguments"]

    def calls(self) -> tuple[ToolCall, ...]:
        """The calls collected, in index order."""
        return tuple(ToolCall(*self._parts[i]) for i in sorted(self._parts))


def parse_tools(text: str, where: str, setting: str = "tools") -> tuple[dict[str, Any], ...]:
    """A tool catalogue from JSON text (`where` names the file in messages)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise bad_setting(setting, f"{where}: not JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(data, list) or not data:
        raise bad_setting(setting, f"{where}: expected a non-empty JSON list of tools")
    for i, tool in enumerate(data):
        if tool_name(tool) is None:
            raise bad_setting(setting, f"{where}: tool {i} is not "
                              '{"type": "function", "function": {"name": ...}}')
    return tuple(data)


def tool_name(tool: Any) -> str | None:
    """A catalogue entry's function name, None where it is not an OpenAI function tool."""
    if not isinstance(tool, dict) or tool.get("type") != "function":
        return None
    function = tool.get("function")
    if not isinstance(function, dict):
        return None
    name = function.get("name")
    return name if isinstance(name, str) and name else None


def default_tools(count: int = 4) -> tuple[dict[str, Any], ...]:
    """A small built-in catalogue (the size of a coding agent's core tools), used when no
    file is given so every request still carries `tools`."""
    names = ("read_file", "search", "run_command", "write_file", "list_dir", "fetch_url")
    return tuple(
        {"type": "function", "function": {
            "name": name, "description": f"{name.replace('_', ' ')} on the workspace",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        }}
        for name in names[: max(1, min(count, len(names)))]
    )


def split_text(text: str, parts: int) -> list[str]:
    """`text` cut into `parts` consecutive pieces (the first ones one character longer):
    several calls of one answer share the tool result's drawn size."""
    size, extra = divmod(len(text), parts)
    out, at = [], 0
    for i in range(parts):
        end = at + size + (1 if i < extra else 0)
        out.append(text[at:end])
        at = end
    return out


def names_of(tools: Sequence[dict[str, Any]]) -> list[str]:
    """The catalogue's function names, in order."""
    return [name for name in (tool_name(t) for t in tools) if name is not None]
