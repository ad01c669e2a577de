"""An agents level's own block: per task and per call index, and the response-time law.

A task is the records of one agent's task (`user`, `conversation`), its calls by `turn`.
It is measured when its first call was sent after the warm-up, and whole when every call up
to the final answer (depth + 1) succeeded. For a whole task: its time is from its first
call's send to its final answer's end; the time waiting on the server is the sum of its
calls' latencies, the time on tools the sum of the gaps between a call's end and the next
call's send (the drawn tool latency plus the client's own lag); calls (compactions
included, also counted alone) and tokens (prompt and completion, from usage) are summed
over its calls. With fan-out the times are the task's own chain's, and the wait after the
call that spawned sub-agents is theirs (`sub_agents_share`), not a tool's. The by-index
statistics leave compactions and sub-agents' calls out: index k is the k-th call of the
task's own tool loop.

Per level: tasks per second are the measured tasks that started in the window from the
first measured task's start to the last one's, over its length (the last start closes the
window, so it is not counted). The law for agents is the response-time law with a task as
the request: X = N / (R + Z), R the mean time of whole measured tasks and Z the mean idle:
the idle drawn after each whole measured task (every one, so the long idles the level's end
cuts short count too, as in `sessions_summary`), plus the client's mean lag beyond the draw
where a next task followed. So `tasks_per_s_law_error` checks the scheduler against its
own numbers. By Little's law on the server, an agent keeps a stream busy for its task's
calls' server time (every call's, sub-agents' and compactions' too) once a cycle, so
`agents_per_stream` = (R + Z) / that time: the agents one stream of server concurrency
holds at this level's latencies.
Per call index: the mean TTFT, ITL and context (prompt tokens), and the share of prompt
tokens the server's prefix cache served (where its usage says).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from servecap.core.records import RequestRecord
from servecap.core.request_metrics import request_metrics
from servecap.kinds.base import KindSeries, KindTable

NS_PER_S = 1e9
NS_PER_MS = 1e6

Task = list[RequestRecord]
QUANTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)


def tasks_of(records: Sequence[RequestRecord]) -> dict[tuple[int, int], Task]:
    """Each task's calls, in call order, by (agent, task)."""
    tasks: dict[tuple[int, int], Task] = defaultdict(list)
    for record in records:
        if record.user is not None and record.conversation is not None:
            tasks[(record.user, record.conversation)].append(record)
    for calls in tasks.values():  # the task's own chain first; a compaction before its call
        calls.sort(key=lambda r: (r.sub_agent or 0, r.turn or 0, not r.compaction))
    return dict(tasks)


def own_chain(calls: Task) -> Task:
    """The task's own calls (its sub-agents' left out), in order."""
    return [r for r in calls if r.sub_agent is None]


def is_whole(calls: Task) -> bool:
    """Every call of the task (compactions and sub-agents too), up to its final answer,
    succeeded."""
    own = own_chain(calls)
    depth = own[0].depth if own else None
    turns = [r.turn for r in own if not r.compaction]
    return (
        depth is not None and turns == list(range(1, depth + 2))
        and all(r.ok and r.sent_at is not None and r.ended_at is not None for r in calls)
    )


def task_row(calls: Task) -> dict[str, float]:
    """A whole task's time, its shares on the server, on tools and on sub-agents (from the
    task's own chain: a wait after a spawn is its sub-agents'), its calls and tokens."""
    own = own_chain(calls)
    start, end = own[0].sent_at, own[-1].ended_at
    assert start is not None and end is not None
    total_s = (end - start) / NS_PER_S
    server_s = sum((r.ended_at or 0) - (r.sent_at or 0) for r in own) / NS_PER_S
    waits = {"tool": 0.0, "spawn": 0.0}
    for before, after in zip(own, own[1:], strict=False):
        gap = ((after.sent_at or 0) - (before.ended_at or 0)) / NS_PER_S
        waits["spawn" if before.tool_call == "spawn" else "tool"] += gap
    every_s = sum((r.ended_at or 0) - (r.sent_at or 0) for r in calls) / NS_PER_S
    return {
        "time_s": total_s, "server_s": server_s, "tools_s": waits["tool"],
        "calls_server_s": every_s,
        "sub_agents_s": waits["spawn"],
        "sub_agents": float(len({r.sub_agent for r in calls} - {None})),
        "calls": float(len(calls)),
        "compactions": float(sum(bool(r.compaction) for r in calls)),
        "prompt_tokens": float(sum(r.prompt_tokens or 0 for r in calls)),
        "completion_tokens": float(sum(r.output_tokens for r in calls)),
    }


def _measured(tasks: dict[tuple[int, int], Task]) -> dict[tuple[int, int], Task]:
    return {k: calls for k, calls in tasks.items()
            if not calls[0].warmup and calls[0].turn == 1 and calls[0].sent_at is not None}


def _idle(tasks: dict[tuple[int, int], Task], measured: set[tuple[int, int]]) -> float | None:
    """The mean idle after a whole measured task: its drawn idle plus the mean lag (the gap
    to the agent's next task's first send, less the draw) where a next task followed."""
    drawn, lags = [], []
    for (agent, task), calls in tasks.items():
        idle_s = own_chain(calls)[-1].think_after_s if own_chain(calls) else None
        if (agent, task) not in measured or not is_whole(calls) or idle_s is None:
            continue
        drawn.append(idle_s)
        following = tasks.get((agent, task + 1))
        if following and following[0].sent_at is not None:
            gap_s = (following[0].sent_at - (own_chain(calls)[-1].ended_at or 0)) / NS_PER_S
            lags.append(max(0.0, gap_s - idle_s))
    if not drawn:
        return None
    return float(np.mean(drawn)) + (float(np.mean(lags)) if lags else 0.0)


def by_call(records: Sequence[RequestRecord]) -> dict[str, dict[str, float]]:
    """Per call index ("1" = a task's first call): mean TTFT and ITL (ms), mean context
    (prompt tokens), the prefix cache's share of prompt tokens, and n."""
    groups: dict[int, list[RequestRecord]] = defaultdict(list)
    for record in records:
        own = not record.compaction and record.sub_agent is None
        if record.turn is not None and not record.warmup and record.ok and own:
            groups[record.turn].append(record)
    out: dict[str, dict[str, float]] = {}
    for call, rows in sorted(groups.items()):
        metrics = [m for m in map(request_metrics, rows) if m is not None]
        itls = [m.itl_ns / NS_PER_MS for m in metrics if m.itl_ns is not None]
        row = {"n": float(len(rows)),
               "context_tokens_mean": float(np.mean([r.prompt_tokens or 0 for r in rows]))}
        if metrics:
            row["ttft_ms_mean"] = float(np.mean([m.ttft_ns / NS_PER_MS for m in metrics]))
        if itls:
            row["itl_ms_mean"] = float(np.mean(itls))
        cached = [r for r in rows if r.cached_tokens is not None and r.prompt_tokens]
        if cached:
            row["cache_hit_share"] = (sum(r.cached_tokens or 0 for r in cached)
                                      / sum(r.prompt_tokens or 0 for r in cached))
        out[str(call)] = row
    return out


def agent_fields(records: Sequence[RequestRecord], agents: int) -> dict[str, Any]:
    """The agents block of one level from all its records (warm-up rows included)."""
    tasks = tasks_of(records)
    measured = _measured(tasks)
    out: dict[str, Any] = {"agents": agents, "by_call": by_call(records),
                           "tasks_measured": len(measured)}
    whole = [task_row(calls) for calls in measured.values() if is_whole(calls)]
    out["tasks_whole"] = len(whole)
    if whole:
        out["task"] = _task_stats(whole)
    starts = sorted(calls[0].sent_at or 0 for calls in measured.values())
    if len(starts) >= 2 and starts[-1] > starts[0]:
        out["tasks_per_s"] = (len(starts) - 1) / ((starts[-1] - starts[0]) / NS_PER_S)
    idle = _idle(tasks, set(measured))
    if idle is not None:
        out["idle_mean_s"] = idle
    if whole and idle is not None and "tasks_per_s" in out:
        cycle_s = out["task"]["time_s_mean"] + out["idle_mean_s"]
        out["tasks_per_s_law"] = law = agents / cycle_s
        out["tasks_per_s_law_error"] = out["tasks_per_s"] / law - 1.0
        # Little's law on the server: an agent keeps a stream busy for the server time of
        # its task's calls (sub-agents' and compactions' too) each cycle
        out["agents_per_stream"] = cycle_s / out["task"]["calls_server_s_mean"]
    return out


def _task_stats(rows: list[dict[str, float]]) -> dict[str, float]:
    """Means over whole tasks, the task time's percentiles, and the shares of task time."""
    times = np.array([r["time_s"] for r in rows])
    stats = {f"{name}_mean": float(np.mean([r[name] for r in rows])) for name in rows[0]}
    stats.update(time_s_p50=float(np.percentile(times, 50)),
                 time_s_p90=float(np.percentile(times, 90)))
    # the distribution's shape, for the report's and the app's chart of task times
    stats.update({f"time_s_q{q}": float(np.percentile(times, q)) for q in QUANTILES})
    total = float(times.sum())
    if total > 0:
        for part in ("server", "tools", "sub_agents"):
            stats[f"{part}_share"] = sum(r[f"{part}_s"] for r in rows) / total
    return stats


def _cell(value: Any, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def agent_tables(level: str, block: dict[str, Any], verdict: str) -> list[KindTable]:
    """The level's tasks (with its `verdict` against the SLOs) and its calls by index, as
    `plan`, the report and the app show (titled by the level: `plan` lists every level's
    one after another)."""
    if not block:
        return []
    task = block.get("task") or {}
    rate, law = block.get("tasks_per_s"), block.get("tasks_per_s_law")
    tasks = KindTable(
        f"{level}: tasks",
        ["tasks", "tasks/s", "law N/(R+Z)", "task time mean (s)", "P50 (s)", "P90 (s)",
         "on server", "on tools", "on sub-agents", "calls/task", "compactions/task",
         "prompt tok/task", "output tok/task", "agents/stream", "SLOs"],
        [[str(block.get("tasks_whole", 0)), _cell(rate, 3), _cell(law, 3),
          _cell(task.get("time_s_mean"), 2), _cell(task.get("time_s_p50"), 2),
          _cell(task.get("time_s_p90"), 2), _cell(task.get("server_share"), 2),
          _cell(task.get("tools_share"), 2), _cell(task.get("sub_agents_share"), 2),
          _cell(task.get("calls_mean"), 1),
          _cell(task.get("compactions_mean"), 2),
          _cell(task.get("prompt_tokens_mean"), 0),
          _cell(task.get("completion_tokens_mean"), 0),
          _cell(block.get("agents_per_stream"), 1), verdict]],
        "whole measured tasks; the law's Z is the mean idle between tasks "
        f"({_cell(block.get('idle_mean_s'), 2)} s)",
    )
    calls = KindTable(
        f"{level}: calls by index",
        ["call", "n", "context (prompt tokens)", "TTFT mean (ms)", "ITL mean (ms)",
         "prefix-cache share"],
        [[call, str(int(row["n"])), _cell(row.get("context_tokens_mean"), 0),
          _cell(row.get("ttft_ms_mean"), 1), _cell(row.get("itl_ms_mean"), 2),
          _cell(row.get("cache_hit_share"), 2)]
         for call, row in (block.get("by_call") or {}).items()],
    )
    return [tasks, calls]


def agent_series(level: str, slug: str, block: dict[str, Any]) -> list[KindSeries]:
    """The level's task-time distribution and latency by call index, as charts."""
    out = []
    task = block.get("task") or {}
    if "time_s_q50" in task:
        xs = [task[f"time_s_q{q}"] for q in QUANTILES]
        out.append(KindSeries(
            f"{slug}-task-time", f"{level}: task time distribution",
            "Whole measured tasks: the share of tasks done within each time (percentiles).",
            "task time (s)", "percentile", {"tasks": (xs, [float(q) for q in QUANTILES])}))
    calls = block.get("by_call") or {}
    if calls:
        xs = [float(c) for c in calls]
        out.append(KindSeries(
            f"{slug}-by-call", f"{level}: latency by call index",
            "Mean TTFT and ITL of the calls at each index of a task: the context grows "
            "with the index.", "call index in the task", "ms",
            {"TTFT mean": (xs, [row.get("ttft_ms_mean") for row in calls.values()]),
             "ITL mean": (xs, [row.get("itl_ms_mean") for row in calls.values()])}))
    return out
