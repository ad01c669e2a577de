"""`verify --load agents`: a first level of C_max agents, the prediction from it and the
sweep's latency curve, the predicted N, and a search from every level measured on a miss;
the plan on a model of the server (pure), then end to end on the simulator."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from servecap.api.predict.verify_agents import AgentsVerifyOptions, AgentsVerifyPlan
from servecap.core.config import SLO
from servecap.core.summary import LevelSummary
from servecap.kinds.agents import AgentsLevel, AgentsLoad
from tests.api.test_verify import next_step, simulator

SLO_30 = SLO(ttft_ms=1000.0, tps=0.0, task_time_s=30.0)
CURVE = [(1, 1.0), (2, 1.0), (4, 1.0), (8, 2.0)]
CLI = [sys.executable, "-m", "servecap.cli.main"]


def model(n: int, holds: int) -> LevelSummary:
    """N agents on a server that holds `holds`: each task 10 s (4 s on the server) and 6 s
    idle, its P90 20 s within the SLO up to `holds` agents, 40 s above."""
    task = {"time_s_mean": 10.0, "time_s_p90": 20.0 if n <= holds else 40.0,
            "server_s_mean": 4.0, "calls_server_s_mean": 4.0}
    return LevelSummary(level=f"agents={n}", n_requests=5 * n, ttft_p90_ms=200.0,
                        kind_block={"tasks_whole": 10, "task": task, "idle_mean_s": 6.0})


def drive(plan: AgentsVerifyPlan, holds: int) -> list[int]:
    measured: list[int] = []
    steps, summary = plan.steps(), None
    while (step := next_step(steps, summary)) is not None:
        assert isinstance(step.level, AgentsLevel)
        measured.append(step.level.agents)
        summary = model(step.level.agents, holds)
    return measured


@pytest.mark.parametrize(("holds", "search", "expected"), [
    (24, False, [8, 20]),  # the prediction holds: two levels
    (24, True, [8, 20, 40, 30, 25, 22, 23, 24]),  # --search: on up, then bisected
    (13, False, [8, 20, 14, 11, 12, 13]),  # a miss: bisected between 8 and 20
])
def test_the_first_level_predicts_then_the_prediction_runs_then_the_search(
    holds: int, search: bool, expected: list[int],
) -> None:
    """C_max 8: 8 agents keep 8 x 4 / 16 = 2 streams busy; at 8 streams the latency doubles,
    T = 14 s and its P90 20 x 14 / 10 = 28 s <= 30, so 8 x 20 / 8 = 20 agents (C_max)."""
    options = AgentsVerifyOptions(slo=SLO_30, search=search, tolerance=0.01, budget=12)
    plan = AgentsVerifyPlan(AgentsLoad(agents=[1]), 8, CURVE, options)
    assert drive(plan, holds) == expected
    assert plan.prediction is not None and plan.prediction.agents == 20


@pytest.mark.slow
def test_verify_agents_on_the_simulator_predicts_runs_and_plans(tmp_path: Path) -> None:
    """A sweep of vllm-direct at x10, then its agents within a 2 s P90 task time (on the
    simulator's clock): every level judged as plan judges it, the verified N that level and
    every lower one passing, and plan and the report say both counts."""
    with simulator("vllm-direct", 10.0, tmp_path / "sim.log") as base_url:
        sweep = subprocess.run([*CLI, "run", "--base-url", base_url, "--concurrency", "1,2,4,8",
                                "--rounds", "3", "--name", "sweep", "--out", str(tmp_path)],
                               capture_output=True, text=True, timeout=300)
        assert sweep.returncode == 0, sweep.stderr[-2000:]
        (sweep_dir,) = tmp_path.glob("sweep-*")
        done = subprocess.run(
            [*CLI, "verify", str(sweep_dir), "--load", "agents", "--task-time-slo-s", "2",
             "--ttft-slo-ms", "100", "--agent-depth", "uniform:1:3", "--tool-latency",
             "exp:0.1", "--think-time", "exp:1", "--duration", "5", "--budget", "5"],
            capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (verify_dir,) = tmp_path.glob("sweep-verify-*")
    result = json.loads((verify_dir / "agents_verification.json").read_text())
    assert result["calibration"] == result["c_max"] and result["predicted_agents"]
    assert f"predicted agents: {result['predicted_agents']} = " in done.stdout
    verdicts = {level["agents"]: level["verdict"] for level in result["levels"]}
    assert result["calibration"] in verdicts and result["predicted_agents"] in verdicts
    verified = result["verified_agents"]
    assert verified is not None  # that level and every lower one measured passed
    assert all(v == "pass" for n, v in verdicts.items() if n <= verified)
    assert f"verified agents: {verified}" in done.stdout
    plan = subprocess.run([*CLI, "plan", str(verify_dir), "--task-time-slo-s", "2",
                           "--ttft-slo-ms", "100", "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    [planned] = json.loads(plan.stdout)["runs"]
    agents = planned["agents"]
    assert agents["agents_max"] == verified
    assert agents["predicted_agents"] == result["predicted_agents"]
    assert {lv["agents"]: lv["verdict"] for lv in agents["levels"]} == verdicts


@pytest.mark.parametrize(("args", "message"), [
    (["--agent-depth", "3"], "--agent-depth applies only to --load agents"),
    (["--task-time-slo-s", "30"], "--task-time-slo-s applies only to --load agents"),
    (["--load", "agents", "--turns", "3"], "--turns applies only to --load users"),
    (["--load", "agents", "--task-time-slo-s", "-1"], "--task-time-slo-s"),
    (["--load", "agents", "--agent-depth", "deep"], "--agent-depth"),
    (["--load", "crowds"], "--load"),
])
def test_bad_agents_input_exits_2_before_any_load(args: list[str], message: str,
                                                  tmp_path: Path) -> None:
    """The sweep does not exist: had anything been loaded or run, it would fail there."""
    done = subprocess.run([*CLI, "verify", str(tmp_path / "no-sweep"), *args],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and done.stderr.count("error:") == 1
    assert "no-sweep" not in done.stderr
