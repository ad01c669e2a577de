"""Agentic traces: recorded tasks whose shape the agents replay (`run --agents --agent-trace`).

The format is JSON Lines, one model call a line, modelled on the per-call fields TraceLab's
agent traces carry (its own files are not read as such: map them to these names):

    {"task_id": "t1", "call_index": 0, "prefix_tokens": 0, "newly_append_tokens": 900,
     "output_tokens": 60, "tools": [{"name": "grep", "tool_wall_latency_ms": 420}]}

- `task_id` (text or number) groups a task's calls; `call_index` (an integer >= 0) orders
  them. A task's last call is its final answer; every call before it ends in tool calls.
- `tools`: the tools the call asked for; their `tool_wall_latency_ms` summed is the wait
  before the next call (the tools are taken to run one after another).
- `newly_append_tokens` of call k + 1: what the agent appended to the context before it
  (the call k's answer and the tool results); less call k's `output_tokens` (0 when not
  given) it is the tool result's size (at least 1 token).
- The first call's prompt is `prefix_tokens + newly_append_tokens` of call 0 (a system
  prompt it reuses and its own text); later calls' `prefix_tokens` are read and checked to
  be whole numbers, but the server's own answers and the replayed results rebuild the
  context, so they are not sent.
- `output_tokens`: each call's answer length, sent as its `max_tokens`.

A task replays as its depth (calls - 1), each tool call's latency and each tool result's
size, its first prompt's length and each call's answer length; a length the trace leaves
out (absent or 0) is the run's workload's, and the idle between tasks is the think time's
draw. Agent a's task t replays trace task (a + t x N) mod T of the T tasks in file order,
N the level's agents.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from servecap.core.errors import bad_setting

MAX_CALLS_PER_TASK = 10_000


@dataclass(frozen=True, slots=True)
class TraceTask:
    """One task's replayed shape: each tool call's latency (s) and result size (tokens),
    the first prompt's tokens and each call's answer tokens (0: the run's)."""

    latencies: tuple[float, ...]
    sizes: tuple[int, ...]
    prompt_tokens: int = 0
    output_tokens: tuple[int, ...] = ()


def parse_agent_trace(text: str, name: str) -> tuple[TraceTask, ...]:
    """The tasks of a trace file's text, in the order their first call appears; a bad file
    raises a `SettingError` naming `agent_trace` and the line."""
    calls: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        row = _row(line, name, number)
        calls[str(row["task_id"])].append((_count(row, "call_index", name, number, 0), row))
    if not calls:
        raise bad_setting("agent_trace", f"{name}: no calls (one JSON object a line)",
                          "invalid ")
    return tuple(_task(task_id, rows, name) for task_id, rows in calls.items())


def _row(line: str, name: str, number: int) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise bad_setting("agent_trace", f"{name} line {number}: not JSON ({exc.msg})",
                          "invalid ") from None
    if not isinstance(row, dict) or "task_id" not in row:
        raise bad_setting("agent_trace", f"{name} line {number}: expected an object with "
                          "task_id", "invalid ")
    for field in ("prefix_tokens", "newly_append_tokens", "output_tokens"):
        _count(row, field, name, number, 0)
    return row


def _count(row: dict[str, Any], field: str, name: str, number: int, default: int) -> int:
    """A whole number >= 0 (`default` when absent)."""
    value = row.get(field, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise bad_setting("agent_trace", f"{name} line {number}: {field} must be a whole "
                          f"number >= 0, got {value!r}", "invalid ")
    return value


def _latency_s(row: dict[str, Any], name: str) -> float:
    """The call's tools' wall latencies summed, in seconds."""
    tools = row.get("tools") or []
    if not isinstance(tools, list):
        raise bad_setting("agent_trace", f"{name}: task {row['task_id']}: tools must be a "
                          "list", "invalid ")
    total_ms = 0.0
    for tool in tools:
        value = tool.get("tool_wall_latency_ms", 0) if isinstance(tool, dict) else None
        if (isinstance(value, bool) or not isinstance(value, int | float)
                or not math.isfinite(value) or value < 0):
            raise bad_setting("agent_trace", f"{name}: task {row['task_id']}: "
                              f"tool_wall_latency_ms must be a number >= 0, got {value!r}",
                              "invalid ")
        total_ms += float(value)
    return total_ms / 1000.0


def _task(task_id: str, rows: list[tuple[int, dict[str, Any]]], name: str) -> TraceTask:
    rows.sort(key=lambda pair: pair[0])
    indices = [index for index, _ in rows]
    if len(set(indices)) != len(indices) or len(rows) > MAX_CALLS_PER_TASK:
        raise bad_setting("agent_trace", f"{name}: task {task_id}: each call_index once, "
                          f"at most {MAX_CALLS_PER_TASK} calls", "invalid ")
    ordered = [row for _, row in rows]
    latencies = tuple(_latency_s(row, name) for row in ordered[:-1])
    sizes = tuple(max(1, int(after.get("newly_append_tokens", 0))
                      - int(before.get("output_tokens", 0)))
                  for before, after in zip(ordered, ordered[1:], strict=False))
    first = ordered[0]
    prompt = int(first.get("prefix_tokens", 0)) + int(first.get("newly_append_tokens", 0))
    outputs = tuple(int(row.get("output_tokens", 0)) for row in ordered)
    return TraceTask(latencies, sizes, prompt, outputs)


def trace_json(tasks: tuple[TraceTask, ...]) -> str:
    """The tasks as compact JSON text (a level travels to worker processes as fields)."""
    return json.dumps([[list(t.latencies), list(t.sizes), t.prompt_tokens,
                        list(t.output_tokens)] for t in tasks], separators=(",", ":"))


def tasks_of_json(text: str) -> tuple[TraceTask, ...]:
    """`trace_json`'s text back as tasks."""
    return tuple(TraceTask(tuple(float(x) for x in lat), tuple(int(n) for n in sizes),
                           int(prompt), tuple(int(n) for n in outputs))
                 for lat, sizes, prompt, outputs in json.loads(text))
