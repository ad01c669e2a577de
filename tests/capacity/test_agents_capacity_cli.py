"""`servecap capacity --load agents` end to end on the simulator: the concurrency boundary,
then levels of N agents; the answer names the verified and the predicted agents, and the
report shows both; bad input exits 2 before any load."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from servecap.cli.main import app
from servecap.core.config import SLO
from servecap.sim.server.runner import start_server_process
from servecap.storage.agents_answer import AgentFields
from servecap.storage.capacity_answer import EXIT_CODES, CapacityAnswer, load_answer

CLI = [sys.executable, "-m", "servecap.cli.main"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--task-time-slo-s", "60"], "--task-time-slo-s"),  # an agents option, no agents
        (["--load", "rate", "--max-agents", "8"], "--max-agents"),
        (["--agents-duration", "30"], "--agents-duration"),
        (["--tool-latency", "exp:2"], "--tool-latency"),
        (["--load", "agents", "--task-time-slo-s", "0"], "--task-time-slo-s"),
        (["--load", "agents", "--task-time-slo-s", "-5"], "--task-time-slo-s"),
        (["--load", "agents", "--task-time-slo-s", "nan"], "--task-time-slo-s"),
        (["--load", "agents", "--agents-duration", "0"], "--agents-duration"),
        (["--load", "agents", "--max-agents", "0"], "--max-agents"),
        (["--load", "agents", "--agent-depth", "deep"], "--agent-depth"),
        (["--load", "agents", "--start-rate", "2"], "--start-rate"),
        (["--load", "agents", "--users-duration", "10"], "--users-duration"),
        (["--load", "agents", "--users-turns", "2"], "--users-turns"),
        (["--load", "agents", "--no-verify"], "--verify/--no-verify"),
    ],
)
def test_bad_agents_input_exits_2_before_any_load(args, message, tmp_path):
    """The base URL points at a closed port: had any load started, it would fail there."""
    result = CliRunner().invoke(app, ["capacity", "--base-url", "http://127.0.0.1:9/v1",
                                      "--out", str(tmp_path / "out"), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert result.output.count("error:") == 1
    assert "127.0.0.1:9" not in result.output  # refused before the server was asked
    assert not (tmp_path / "out").exists()


def test_the_sentence_names_verified_and_predicted_agents():
    answer = CapacityAnswer(
        deployment="m", status="found", slo=SLO(ttft_ms=500.0), confidence=0.95, c_max=4,
        first_miss=5, binding_slo="TTFT", latency_mean_s=1.0, predicted_users=None,
        requests=900, elapsed_s=100.0, probes=[], load="agents",
        agents=AgentFields(agents_max=9, first_miss=10, binding="task time",
                           predicted_agents=8, agents_per_stream=2.0, predicted_streams=4,
                           predicted_bound="C_max", task_time_slo_s=60.0,
                           task_time_s=55.0, tasks_per_s=0.2, lowest=1, max_agents=256))
    sentence = answer.sentence()
    assert sentence.startswith("m holds 9 agents verified (predicted 8 = C_max 4 x 2.00 "
                               "agents/stream) within P90 task time <= 60 s and P90 TTFT "
                               "<= 500 ms per call")
    assert "first miss 10 agents on task time" in sentence
    again = CapacityAnswer.model_validate_json(answer.model_dump_json())
    assert again.agents == answer.agents and again.sentence() == sentence


def test_the_sentence_says_when_the_task_time_bounds_the_prediction():
    fields = AgentFields(agents_max=3, first_miss=4, binding="task time", predicted_agents=5,
                         agents_per_stream=2.5, predicted_streams=2,
                         predicted_bound="task time", task_time_slo_s=30.0, lowest=1)
    answer = CapacityAnswer(
        deployment="m", status="found", slo=SLO(), confidence=0.95, c_max=48, first_miss=49,
        binding_slo="TTFT", latency_mean_s=1.0, predicted_users=None, requests=900,
        elapsed_s=100.0, probes=[], load="agents", agents=fields)
    assert ("holds 3 agents verified (predicted 5 = 2 streams x 2.50 agents/stream, where "
            "the task time reaches its SLO below C_max 48)") in answer.sentence()
    unpredicted = answer.model_copy(update={"agents": fields.model_copy(
        update={"predicted_agents": None, "agents_per_stream": None})})
    assert "not predicted: the task time would miss its SLO even at 1 stream" in \
        unpredicted.sentence()


# alone: at x40 the client's lag weighs forty times; beside a parallel suite's workers its
# c=1 probe once read undecided against P90 TTFT 3000 ms and TPS 15 (75 ms, 600 on the clock)
@pytest.mark.slow
@pytest.mark.alone
def test_agents_capacity_on_the_simulator_is_predicted_verified_and_reported(tmp_path):
    """vllm-direct at x40 with a 3 s TTFT and a 30 s P90 task time: C_max, then agents
    levels; the answer's N ran and met both SLOs, its prediction beside it; with 2 GPUs at
    3 USD an hour, the answer and the report cost an agent-hour at 6 USD / N."""
    out = tmp_path / "out"
    sim = start_server_process("vllm-direct", time_scale=40.0)
    try:
        done = subprocess.run(
            [*CLI, "capacity", "--base-url", sim.base_url, "--load", "agents",
             "--ttft-slo-ms", "3000", "--first-look", "20", "--task-time-slo-s", "30",
             "--agents-duration", "120", "--max-time", "4m", "--format", "json",
             "--gpus", "2", "--gpu-hour-cost", "3", "--out", str(out)],
            capture_output=True, text=True, timeout=600,
        )
    finally:
        sim.stop()
    answer = load_answer(out)
    assert answer is not None, done.stderr[-2000:]
    assert json.loads(done.stdout)["headline"] == answer.sentence()
    assert answer.status in ("found", "client_bound"), done.stderr[-2000:]
    assert done.returncode == EXIT_CODES[answer.status]
    agents = answer.agents
    assert answer.load == "agents" and agents is not None and answer.c_max
    assert agents.agents_max and agents.predicted_agents  # verified and predicted
    verified = next(p for p in answer.probes if p.agents == agents.agents_max)
    assert verified.verdict == "pass" and verified.n_judged >= 3
    assert agents.task_time_s is not None and agents.task_time_s <= 30.0
    assert f"holds {agents.agents_max} agents verified (predicted " \
           f"{agents.predicted_agents}" in answer.sentence()
    assert answer.cost is not None
    cost = answer.cost.point("verified agents")
    assert cost is not None and cost.users == agents.agents_max
    assert cost.level == f"agents={agents.agents_max}" and cost.output_tok_s
    assert cost.cost_per_user_hour == pytest.approx(6.0 / agents.agents_max)
    report = subprocess.run([*CLI, "report", str(answer.probe_run), "--out",
                             str(tmp_path / "report")], capture_output=True, text=True,
                            timeout=300)
    assert report.returncode == 0, report.stderr[-2000:]
    html = (tmp_path / "report" / "report.html").read_text()
    assert f"{agents.agents_max} agents verified" in html
    assert f"predicted {agents.predicted_agents}" in html
    assert "verified agents" in html and f"{6.0 / agents.agents_max:.4g} USD" in html
    # `plan` (and the app's cost panel, which reads plan's) prices the same point
    plan = subprocess.run([*CLI, "plan", str(answer.probe_run), "--ttft-slo-ms", "3000",
                           "--format", "json"], capture_output=True, text=True, timeout=300)
    [planned] = json.loads(plan.stdout)["runs"]
    point = next(p for p in planned["cost"]["points"] if p["at"] == "verified agents")
    assert point["users"] == agents.agents_max
    assert point["cost_per_user_hour"] == pytest.approx(6.0 / agents.agents_max)
    # `plan` judges each agents level as the search did, given its SLOs on the simulator's
    # clock (3000 ms and 30 s at x40)
    plan = subprocess.run([*CLI, "plan", str(answer.probe_run), "--ttft-slo-ms", "75",
                           "--task-time-slo-s", "0.75", "--format", "json"],
                          capture_output=True, text=True, timeout=300)
    [planned] = json.loads(plan.stdout)["runs"]
    verdicts = {level["agents"]: level["verdict"] for level in planned["agents"]["levels"]}
    assert verdicts == {p.agents: p.verdict for p in answer.probes if p.agents is not None}


@pytest.mark.parametrize("load", ["agents", "rate"])
def test_targets_refuse_a_load_they_would_ignore(load, tmp_path):
    result = CliRunner().invoke(app, [
        "capacity", "--target", "a=http://127.0.0.1:9/v1", "--target",
        "b=http://127.0.0.1:9/v1", "--load", load, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "--target compares concurrency searches; --load" in result.output
    assert not (tmp_path / "out").exists()
