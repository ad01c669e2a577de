"""The concurrent agents a server is predicted to hold within a task-time SLO.

An agent's task is server time (its calls) plus time on tools and sub-agents, then idle. At
c streams in flight the server part scales with the per-call latency there, so from one
measured agents level A (N_A agents, mean task time T_A, its server part S_A, the server
time of all its calls K_A, idle I, and the SLO's statistic of the task time T_A*) and the
concurrency probes' mean latency curve L(c):

    c_A  = N_A K_A / (T_A + I)          the streams A kept busy (Little's law)
    r(c) = L(c) / L(c_A)                 the per-call latency at c against A's
    T(c) = T_A + (r(c) - 1) S_A          the task time at c; the statistic T_A* T(c) / T_A
    N(c) = c (T(c) + I) / (K_A r(c))     the agents that keep c streams busy

The prediction is N(c) at the largest c <= C_max whose task-time statistic meets the SLO:
bound by C_max when the task time still meets it there, else by the task time. Assumed: the
agents' calls slow with concurrency as the probes' requests do (their contexts differ), the
task time's distribution keeps its shape, and tools take the same time at any load.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np


@dataclass(frozen=True, slots=True)
class AgentTasks:
    """One measured agents level's tasks, in seconds on one clock (see the module)."""

    agents: int
    time_mean_s: float  # T_A
    time_stat_s: float  # T_A*, the SLO's statistic of the task time
    server_s: float  # S_A: the task's own chain on the server
    calls_server_s: float  # K_A: every call of the task (sub-agents' and compactions' too)
    idle_s: float  # I


@dataclass(frozen=True, slots=True)
class AgentsPrediction:
    """N agents predicted, at `streams` in flight, with `per_stream` agents each."""

    agents: int
    streams: int
    per_stream: float
    bound: Literal["C_max", "task time"]


def predict_agents(
    curve: Sequence[tuple[int, float]], c_max: int, tasks: AgentTasks, task_slo_s: float,
) -> AgentsPrediction | None:
    """The prediction (see the module) from the probes' (concurrency, mean latency) `curve`;
    None when the task time would miss its SLO even at one stream, or nothing to scale by."""
    points = sorted((c, latency) for c, latency in curve if latency > 0)
    cycle_s = tasks.time_mean_s + tasks.idle_s
    if not points or c_max < 1 or tasks.calls_server_s <= 0 or tasks.time_mean_s <= 0:
        return None
    levels, latencies = zip(*points, strict=True)
    streams_a = tasks.agents * tasks.calls_server_s / cycle_s
    latency_a = float(np.interp(streams_a, levels, latencies))
    best: AgentsPrediction | None = None
    for streams in range(1, c_max + 1):
        ratio = float(np.interp(streams, levels, latencies)) / latency_a
        time_s = tasks.time_mean_s + (ratio - 1.0) * tasks.server_s
        if tasks.time_stat_s * time_s / tasks.time_mean_s > task_slo_s:
            break
        per_stream = (time_s + tasks.idle_s) / (tasks.calls_server_s * ratio)
        bound: Literal["C_max", "task time"] = "C_max" if streams == c_max else "task time"
        best = AgentsPrediction(round(streams * per_stream), streams, per_stream, bound)
    return best
