"""Agents levels judged against a task-time SLO, and the agents a run's levels hold.

A level of N agents passes when its task time's statistic (P90 or mean of its whole measured
tasks) is within `SLO.task_time_s` and its calls' TTFT statistic within `SLO.ttft_ms`, on at
least `MIN_WHOLE_TASKS` whole tasks. These are point values over the level's tasks (tens of
them), not confidence bounds. A run's agents answer (`plan_agents`) is the largest N at which
that level and every lower agents level pass, as C_max is for concurrency, verified because
that level ran; beside it, `stats.agents_prediction` from the run's closed levels, when it
has them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from servecap.core.config import SLO
from servecap.core.summary import LevelSummary
from servecap.kinds import closed
from servecap.stats.agents_prediction import AgentsPrediction, AgentTasks, predict_agents
from servecap.stats.capacity import plan_levels

# A level's task-time statistic rests on at least this many whole tasks (else a miss: an
# answer must not rest on one lucky task); give a longer duration to judge longer tasks.
MIN_WHOLE_TASKS = 3
AGENTS_PREFIX = "agents"  # an agents level's key: `agents=8`


@dataclass(frozen=True, slots=True)
class AgentVerdict:
    """One agents level judged: its task time and per-call TTFT."""

    passed: bool
    reason: str
    task_time_s: float | None
    ttft_ms: float | None
    tasks: int


def judge_agents(
    block: dict[str, Any], ttft_ms: float | None, task_slo_s: float, ttft_slo_ms: float,
    statistic: str,
) -> AgentVerdict:
    """A level's verdict from its agents block and its calls' TTFT statistic: both within
    their SLOs, on at least `MIN_WHOLE_TASKS` whole tasks."""
    tasks = int(block.get("tasks_whole") or 0)
    task_time = (block.get("task") or {}).get(f"time_s_{statistic}")
    if tasks < MIN_WHOLE_TASKS or task_time is None:
        return AgentVerdict(False, f"{tasks} whole tasks (fewer than {MIN_WHOLE_TASKS})",
                            task_time, ttft_ms, tasks)
    missed = []
    if task_time > task_slo_s:
        missed.append("task time")
    if ttft_ms is None or ttft_ms > ttft_slo_ms:
        missed.append("TTFT")
    return AgentVerdict(not missed, " and ".join(missed), task_time, ttft_ms, tasks)


def judge_level(level: LevelSummary, slo: SLO) -> AgentVerdict:
    """An agents level against `slo` (its task time and per-call TTFT)."""
    return judge_agents(level.kind_block or {}, level.value("ttft", slo.statistic),
                        slo.task_time_s, slo.ttft_ms, slo.statistic)


def agent_tasks(block: dict[str, Any], agents: int, statistic: str) -> AgentTasks | None:
    """A level's tasks as `stats.agents_prediction` reads them (None: no whole tasks)."""
    task, idle = block.get("task") or {}, block.get("idle_mean_s")
    names = ("time_s_mean", f"time_s_{statistic}", "server_s_mean", "calls_server_s_mean")
    if idle is None or any(task.get(name) is None for name in names):
        return None
    mean, stat, server, calls = (float(task[name]) for name in names)
    return AgentTasks(agents, mean, stat, server, calls, float(idle))


class AgentLevelVerdict(BaseModel):
    """One agents level's verdict in a plan."""

    agents: int
    verdict: str  # pass / fail
    reason: str  # what it missed, empty on a pass
    task_time_s: float | None
    ttft_ms: float | None
    tasks: int  # whole tasks judged


class AgentsPlan(BaseModel):
    """A run's agents under an SLO (`plan --format json`'s `agents`)."""

    task_time_slo_s: float
    agents_max: int | None  # verified: that level and every lower one met the SLOs
    first_miss: int | None  # the lowest agents level that missed
    binding: str | None  # what it missed ("task time", "TTFT", too few tasks)
    task_time_s: float | None  # the statistic at agents_max
    # from the run's closed levels (`stats.agents_prediction`), when it has them
    predicted_agents: int | None = None
    predicted_streams: float | None = None  # a mean: not only whole streams
    predicted_bound: str | None = None
    agents_per_stream: float | None = None
    c_max: int | None = None  # of the run's closed levels, the prediction's bound
    levels: list[AgentLevelVerdict] = []


def plan_agents(levels: Sequence[LevelSummary], slo: SLO) -> AgentsPlan | None:
    """The run's agents answer (see the module); None when it has no agents levels."""
    agent_levels = sorted(
        (lv for lv in levels if lv.key.prefix == AGENTS_PREFIX and not lv.partial),
        key=lambda lv: lv.key.value)
    if not agent_levels:
        return None
    judged = [(level, judge_level(level, slo)) for level in agent_levels]
    best: tuple[LevelSummary, AgentVerdict] | None = None
    miss: tuple[LevelSummary, AgentVerdict] | None = None
    for level, verdict in judged:
        if not verdict.passed:
            miss = (level, verdict)
            break
        best = (level, verdict)
    c_max, prediction = _prediction(levels, slo, best[0] if best else agent_levels[0])
    return AgentsPlan(
        task_time_slo_s=slo.task_time_s,
        agents_max=int(best[0].key.value) if best else None,
        first_miss=int(miss[0].key.value) if miss else None,
        binding=miss[1].reason if miss else None,
        task_time_s=best[1].task_time_s if best else None,
        predicted_agents=prediction.agents if prediction else None,
        predicted_streams=prediction.streams if prediction else None,
        predicted_bound=prediction.bound if prediction else None,
        agents_per_stream=prediction.per_stream if prediction else None,
        c_max=c_max,
        levels=[AgentLevelVerdict(
            agents=int(level.key.value), verdict="pass" if v.passed else "fail",
            reason=v.reason, task_time_s=v.task_time_s, ttft_ms=v.ttft_ms, tasks=v.tasks)
            for level, v in judged],
    )


def concurrency_boundary(
    levels: Sequence[LevelSummary], slo: SLO,
) -> tuple[int | None, list[tuple[int, float]]]:
    """C_max of the closed levels among `levels` under `slo`, and their latency curve
    ((concurrency, mean latency in s), what `predict_from` scales by)."""
    closed_levels = [lv for lv in levels if closed.KIND.owns(lv.key)]
    c_max = plan_levels(closed_levels, slo, lambda key: closed.KIND).c_max
    return c_max, [(int(lv.key.value), lv.latency_mean_s) for lv in closed_levels
                   if lv.latency_mean_s]


def predict_from(
    level: LevelSummary, curve: Sequence[tuple[int, float]], c_max: int | None, slo: SLO,
) -> AgentsPrediction | None:
    """`stats.agents_prediction` from one agents level, a latency curve and its C_max,
    within `slo`'s task time (None without a C_max or whole tasks)."""
    tasks = agent_tasks(level.kind_block or {}, int(level.key.value), slo.statistic)
    if not c_max or tasks is None:
        return None
    return predict_agents(curve, c_max, tasks, slo.task_time_s)


def _prediction(
    levels: Sequence[LevelSummary], slo: SLO, level: LevelSummary,
) -> tuple[int | None, AgentsPrediction | None]:
    """C_max of the run's closed levels and the prediction from them and `level`."""
    c_max, curve = concurrency_boundary(levels, slo)
    return c_max, predict_from(level, curve, c_max, slo)


def agents_plan_sentence(name: str, plan: AgentsPlan, slo: SLO) -> str:
    """The run's agents answer in one sentence (`plan`, the report, the app)."""
    stat = slo.statistic.upper()
    slos = (f"{stat} task time <= {plan.task_time_slo_s:g} s and {stat} TTFT <= "
            f"{slo.ttft_ms:g} ms per call")
    miss = (f"; first miss {plan.first_miss} agents on {plan.binding}"
            if plan.first_miss is not None else "; every agents level passed: test higher")
    predicted = ""
    if plan.predicted_agents is not None:
        bound = ("C_max" if plan.predicted_bound == "C_max"
                 else f"the task time, below C_max {plan.c_max}")
        predicted = (f" (predicted {plan.predicted_agents} at {plan.predicted_streams:g} "
                     f"streams, bound by {bound})")
    if plan.agents_max is None:
        return f"{name}: no agents level meets {slos}{miss}."
    return f"{name} holds {plan.agents_max} agents verified{predicted} within {slos}{miss}."
