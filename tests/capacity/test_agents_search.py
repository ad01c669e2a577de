"""The agents capacity search as a plan: the concurrency boundary first, then levels of N
agents doubled and bisected on the task time and per-call TTFT, the verified N; on a scaled
simulator's clock. Pure and seeded: each level's numbers come from a model of the server,
not from a run."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from servecap.api.capacity.agents_search import AgentCapacitySearch
from servecap.api.capacity.probe_rule import ProbeSettings
from servecap.core.config import SLO
from servecap.core.level_key import LevelKey
from servecap.core.summary import LevelSummary
from servecap.kinds.agents import AgentsLevel, AgentsLoad
from servecap.kinds.agents_verdict import MIN_WHOLE_TASKS, judge_agents
from tests.api.test_verify import next_step
from tests.capacity.records import closed_records

SLO_P90 = SLO(ttft_ms=1000.0, tps=15.0, statistic="p90")
TASK = AgentsLoad(agents=[1], tool_latency="exp:1", idle="exp:10", duration_s=120.0, seed=7)


def block(tasks: int, p90_s: float, per_stream: float = 2.0) -> dict[str, object]:
    return {"tasks_whole": tasks, "task": {"time_s_p90": p90_s, "time_s_mean": p90_s / 2},
            "agents_per_stream": per_stream, "tasks_per_s": 0.5}


def agent_summary(n: int, task_p90_s: float, ttft_ms: float) -> LevelSummary:
    return LevelSummary(level=str(LevelKey.coerce(f"agents={n}")), n_requests=10 * n,
                        ttft_p90_ms=ttft_ms, kind_block=block(10 * n, task_p90_s))


def drive(
    search: AgentCapacitySearch, ttft_at_c: Callable[[int], float],
    task_at_n: Callable[[int], float], ttft_at_n: Callable[[int], float] = lambda n: 100.0,
) -> list[str]:
    """Run the plan as the engine does: a closed probe's records go to its rule, an agents
    level's summary comes from the model; returns the levels in order."""
    measured: list[str] = []
    steps = search.steps()
    summary = None
    while (step := next_step(steps, summary)) is not None:
        level = step.level
        if isinstance(level, AgentsLevel):
            measured.append(f"agents={level.agents}")
            summary = agent_summary(level.agents, task_at_n(level.agents),
                                    ttft_at_n(level.agents))
            continue
        c = level.demand()
        measured.append(f"c={c}")
        assert step.until is not None
        for record in closed_records(c, lambda i, c=c: ttft_at_c(c), level.n_requests):
            if step.until.seen(record):
                break
        summary = LevelSummary(concurrency=c, latency_mean_s=1.1, n_requests=60, n_ok=60)
    return measured


def new_search(**extra: object) -> AgentCapacitySearch:
    return AgentCapacitySearch(SLO_P90, ProbeSettings(), 3600.0, TASK, **extra)


def test_the_concurrency_boundary_then_agents_doubled_and_bisected():
    """C_max 5 (TTFT 200 ms x c); P90 task time 5 s x N: 12 agents meet 60 s, 13 do not.
    The agents start at C_max."""
    search = new_search()
    measured = drive(search, lambda c: 200.0 * c, lambda n: 5.0 * n)
    closed = [m for m in measured if m.startswith("c=")]
    assert closed == ["c=1", "c=2", "c=4", "c=8", "c=6", "c=5"]
    agents = [m for m in measured if m.startswith("agents=")]
    assert agents == [f"agents={n}" for n in (5, 10, 20, 15, 12, 13)]
    assert measured.index("agents=5") > measured.index("c=5")  # the boundary comes first
    result = search.result()
    assert (result.lower, result.upper) == (12, 13)
    assert search.concurrency.result().lower == 5
    assert search.probe(13) is not None and search.probe(13).verdict.reason == "task time"


def test_per_call_ttft_binds_an_agents_level_too():
    search = new_search()
    drive(search, lambda c: 10.0, lambda n: 1.0, ttft_at_n=lambda n: 150.0 * n)
    assert (search.result().lower, search.result().upper) == (6, 7)
    assert search.probe(7).verdict.reason == "TTFT"


def test_below_c_max_the_agents_search_halves():
    """C_max 5, and only 2 agents meet the task-time SLO."""
    search = new_search()
    measured = drive(search, lambda c: 200.0 * c, lambda n: 25.0 * n)
    assert [m for m in measured if m.startswith("agents=")] == [
        "agents=5", "agents=2", "agents=3"]
    assert (search.result().lower, search.result().upper) == (2, 3)


def test_without_a_concurrency_boundary_the_agents_start_at_one():
    search = new_search()
    measured = drive(search, lambda c: 5000.0, lambda n: 5.0 * n)
    assert measured[:2] == ["c=1", "agents=1"]


def test_the_agents_search_stops_at_its_maximum():
    search = new_search(max_agents=8)
    measured = drive(search, lambda c: 10.0, lambda n: 1.0)
    assert measured[-1] == "agents=8" and search.result().upper is None


def test_no_time_left_runs_no_level():
    search = AgentCapacitySearch(SLO_P90, ProbeSettings(), 0.0, TASK)
    assert drive(search, lambda c: 10.0, lambda n: 1.0) == []
    assert search.out_of_time


def test_a_scaled_simulator_runs_and_judges_agents_on_its_clock():
    """At x10 a 60 s task-time SLO reads 6 s, and the agents' times are a tenth."""
    search = new_search()
    search.use_clock(10.0)
    level = search.probe_level(3)
    assert (level.agents, level.duration_s) == (3, 12.0)
    assert (level.tool_latency, level.idle) == ("exp:0.1", "exp:1")
    drive(search, lambda c: 20.0 * c, lambda n: 0.5 * n)  # 5 s x N on the real clock
    assert (search.result().lower, search.result().upper) == (12, 13)


@pytest.mark.parametrize(
    ("tasks", "p90_s", "ttft_ms", "passed", "reason"),
    [
        (10, 59.0, 900.0, True, ""),
        (10, 61.0, 900.0, False, "task time"),
        (10, 59.0, 1100.0, False, "TTFT"),
        (10, 61.0, 1100.0, False, "task time and TTFT"),
        (10, 59.0, None, False, "TTFT"),
        (MIN_WHOLE_TASKS - 1, 1.0, 1.0, False, f"{MIN_WHOLE_TASKS - 1} whole tasks"),
    ],
)
def test_a_level_is_judged_on_its_task_time_and_calls(tasks, p90_s, ttft_ms, passed, reason):
    verdict = judge_agents(block(tasks, p90_s), ttft_ms, 60.0, 1000.0, "p90")
    assert verdict.passed is passed
    assert verdict.reason.startswith(reason)


def test_the_mean_statistic_reads_the_mean_task_time():
    """The block's mean is half its P90: 100 s P90 is a 50 s mean, within 60 s."""
    assert judge_agents(block(10, 100.0), 10.0, 60.0, 1000.0, "mean").passed
    assert not judge_agents(block(10, 100.0), 10.0, 60.0, 1000.0, "p90").passed
