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

The prediction is N(c) at the largest c <= C_max (a mean, so not only whole streams) up to
which the task-time statistic meets the SLO: bound by C_max when the task time still meets
it there, else by the task time. Assumed: the
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
    """N agents predicted, at `streams` in flight (a mean), with `per_stream` agents each."""

    agents: int
    streams: float
    per_stream: float
    bound: Literal["C_max", "task time"]


# Streams in flight are a mean, so the task time's crossing is found on a fine grid of c.
STREAMS_STEP = 0.01


def predict_agents(
    curve: Sequence[tuple[int, float]], c_max: int, tasks: AgentTasks, task_slo_s: float,
) -> AgentsPrediction | None:
    """The prediction (see the module) from the probes' (concurrency, mean latency) `curve`;
    None when the task time would miss its SLO even at one stream, or nothing to scale by.
    The curve is made non-decreasing first: a latency that falls as load grows is noise."""
    points = sorted((c, latency) for c, latency in curve if latency > 0)
    cycle_s = tasks.time_mean_s + tasks.idle_s
    if not points or c_max < 1 or tasks.calls_server_s <= 0 or tasks.time_mean_s <= 0:
        return None
    levels = np.array([c for c, _ in points], dtype=float)
    latencies = np.maximum.accumulate([latency for _, latency in points])
    streams_a = tasks.agents * tasks.calls_server_s / cycle_s
    streams = np.arange(1.0, c_max + STREAMS_STEP / 2, STREAMS_STEP)
    ratio = np.interp(streams, levels, latencies) / np.interp(streams_a, levels, latencies)
    time_s = tasks.time_mean_s + (ratio - 1.0) * tasks.server_s
    missed = np.flatnonzero(tasks.time_stat_s * time_s / tasks.time_mean_s > task_slo_s)
    last = int(missed[0]) - 1 if missed.size else len(streams) - 1
    if last < 0:
        return None
    per_stream = float((time_s[last] + tasks.idle_s) / (tasks.calls_server_s * ratio[last]))
    at = float(streams[last])
    bound: Literal["C_max", "task time"] = "task time" if missed.size else "C_max"
    return AgentsPrediction(round(at * per_stream), round(at, 2), per_stream, bound)
