"""`kinds.agents_verdict.plan_agents`: a run's agents within the task-time SLO, verified by
its levels (this and every lower level pass) and predicted from its closed levels; `plan`
keeps the agents levels out of the per-call C_max."""

from __future__ import annotations

from pathlib import Path

from servecap.api.stored.plan import plan_run
from servecap.core.config import SLO
from servecap.core.run_info import RunInfo
from servecap.core.summary import LevelSummary
from servecap.kinds.agents_verdict import agents_plan_sentence, plan_agents
from servecap.storage.run_dir import Run

SLO_30 = SLO(ttft_ms=1000.0, tps=0.0, task_time_s=30.0)


def closed(c: int, latency_s: float) -> LevelSummary:
    return LevelSummary(concurrency=c, ttft_p90_ms=100.0, ttft_mean_ms=100.0, tps_p90=50.0,
                        tps_mean=50.0, latency_mean_s=latency_s)


def agents(n: int, task_p90_s: float, ttft_ms: float = 200.0, tasks: int = 10) -> LevelSummary:
    """N agents whose tasks take 10 s on average (4 s of it on the server) with 6 s idle:
    they keep N x 4 / 16 streams busy."""
    task = {"time_s_mean": 10.0, "time_s_p90": task_p90_s, "server_s_mean": 4.0,
            "calls_server_s_mean": 4.0}
    return LevelSummary(level=f"agents={n}", n_requests=5 * tasks, ttft_p90_ms=ttft_ms,
                        kind_block={"tasks_whole": tasks, "task": task, "idle_mean_s": 6.0})


CURVE = [closed(1, 1.0), closed(2, 1.0), closed(4, 1.0), closed(8, 2.0)]


def test_agents_max_is_the_highest_level_with_every_lower_one_passing():
    plan = plan_agents([*CURVE, agents(4, 12.0), agents(8, 20.0), agents(16, 40.0),
                        agents(32, 25.0)], SLO_30)
    assert plan is not None
    assert (plan.agents_max, plan.first_miss, plan.binding) == (8, 16, "task time")
    assert plan.task_time_s == 20.0
    assert [(lv.agents, lv.verdict) for lv in plan.levels] == [
        (4, "pass"), (8, "pass"), (16, "fail"), (32, "pass")]
    # predicted from the closed levels (C_max 8) and agents=8 (2 streams busy, latency 1 s):
    # at 8 streams the latency doubles, T = 10 + 4 = 14 s, its P90 20 x 14/10 = 28 s <= 30,
    # so 8 x (14 + 6) / (4 x 2) = 20 agents, bound by C_max
    assert (plan.c_max, plan.predicted_agents, plan.predicted_streams,
            plan.predicted_bound) == (8, 20, 8, "C_max")
    sentence = agents_plan_sentence("m", plan, SLO_30)
    assert sentence == ("m holds 8 agents verified (predicted 20 at 8 streams, bound by C_max) "
                        "within P90 task time <= 30 s and P90 TTFT <= 1000 ms per call; first "
                        "miss 16 agents on task time.")


def test_ttft_and_too_few_tasks_are_misses_and_no_closed_levels_no_prediction():
    plan = plan_agents([agents(2, 5.0), agents(4, 5.0, ttft_ms=1500.0)], SLO_30)
    assert plan is not None
    assert (plan.agents_max, plan.first_miss, plan.binding) == (2, 4, "TTFT")
    assert plan.predicted_agents is None and plan.c_max is None
    few = plan_agents([agents(2, 5.0, tasks=2)], SLO_30)
    assert few is not None and few.agents_max is None
    assert few.binding == "2 whole tasks (fewer than 3)"
    assert agents_plan_sentence("m", few, SLO_30).startswith("m: no agents level meets P90 "
                                                             "task time <= 30 s")
    assert plan_agents(CURVE, SLO_30) is None  # no agents levels, no agents answer


def test_plan_keeps_agents_levels_out_of_c_max(tmp_path: Path):
    """An agents level that misses the per-call SLOs (here TTFT 1500 ms) is judged on its
    tasks, not as a concurrency level that would cap C_max."""
    run = Run(path=tmp_path, info=RunInfo(name="m"),
              levels=[*CURVE, agents(2, 5.0, ttft_ms=1500.0)])
    plan = plan_run(run, SLO_30)
    assert plan.c_max == 8
    assert [str(v.level) for v in plan.levels] == ["c=1", "c=2", "c=4", "c=8"]
