"""`servecap run --agents`: bad input exits 2 with one message before any load, the api's
settings take the same rules, and a run on the simulator stores the agents' block."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servecap.api.run.agent_settings import AgentSettings
from servecap.api.run.load_settings import LoadSettings, load_fields
from servecap.api.run.workload_options import WorkloadFlags
from servecap.api.stored.plan import plan_runs
from servecap.api.stored.report import ReportOptions, build_report, write_report
from servecap.cli.main import app as cli_app
from servecap.core.config import SLO
from servecap.core.errors import SettingError
from servecap.kinds.agents import AgentsLoad
from servecap.sim import builtin_profile, start_server_in_thread
from servecap.storage.formats.br_out import run_partials
from servecap.storage.runs import load_run

# 127.0.0.1:9 (discard) is never contacted: input is refused before preflight.
NOWHERE = ["run", "--base-url", "http://127.0.0.1:9/v1"]


def tools_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "tools.json"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agents", "0"], "--agents"),
        (["--agents", "x"], "--agents"),
        (["--agents", "4", "--agent-depth", "0"], "--agent-depth '0'"),
        (["--agents", "4", "--agent-depth", "deep"], "--agent-depth 'deep'"),
        (["--agents", "4", "--agent-depth", "uniform:4:1"], "--agent-depth"),
        (["--agents", "4", "--tool-result-tokens", "-5"], "--tool-result-tokens"),
        (["--agents", "4", "--tool-latency", "exp:-1"], "--tool-latency"),
        (["--agents", "4", "--think-time", "soon"], "--think-time"),
        (["--agents", "4", "--concurrency", "4"], "--agents and --concurrency"),
        (["--agents", "4", "--users", "4"], "--agents"),
        (["--agents", "4", "--endpoint", "completions"], "--endpoint chat"),
        (["--agents", "4", "--context-budget", "0"], "--context-budget '0'"),
        (["--agents", "4", "--context-budget", "big"], "--context-budget 'big'"),
        (["--agents", "4", "--context-budget", "100:200"], "SUMMARY must be shorter"),
        (["--agents", "4", "--context-budget", "1:2:3"], "--context-budget"),
        (["--context-budget", "8000"], "--context-budget needs --agents"),
        (["--agents", "4", "--fan-out", "0"], "--fan-out '0'"),
        (["--agents", "4", "--fan-out", "many"], "--fan-out 'many'"),
        (["--fan-out", "3"], "--fan-out needs --agents"),
        (["--agent-depth", "3"], "--agent-depth needs --agents"),
        (["--tool-latency", "exp:2"], "--tool-latency needs --agents"),
    ],
)
def test_bad_agents_input_exits_2_before_any_load(args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli_app, [*NOWHERE, *args])
    assert result.exit_code == 2, result.output
    assert message in result.output and "cannot reach" not in result.output
    assert result.output.count("error:") == 1


@pytest.mark.parametrize(
    "text", ["not json", "{}", "[]", '[{"type": "function"}]', '["read_file"]'],
)
def test_a_tools_file_that_is_not_a_list_of_tools_exits_2(tmp_path: Path, text: str) -> None:
    path = tools_file(tmp_path, text)
    result = CliRunner().invoke(cli_app, [*NOWHERE, "--agents", "2", "--tools", path])
    assert result.exit_code == 2, result.output
    assert "--tools" in result.output and path in result.output


def test_a_missing_tools_file_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli_app, [*NOWHERE, "--agents", "2", "--tools", str(tmp_path / "none.json")])
    assert result.exit_code == 2 and "none.json" in result.output


def test_the_api_settings_build_the_agents_load(tmp_path: Path) -> None:
    tools = [{"type": "function", "function": {"name": "grep"}}]
    agent = AgentSettings("8,4", "uniform:1:3", "fixed:0.5", "200",
                          tools_file(tmp_path, json.dumps(tools)), "8000")
    settings = LoadSettings(WorkloadFlags("128", "16"), agent=agent, duration=30.0, seed=3)
    fields = load_fields(settings)
    load = fields["load"]
    assert isinstance(load, AgentsLoad)
    assert (load.agents, load.depth, load.tool_latency, load.tool_result_tokens) == (
        [4, 8], "uniform:1:3", "fixed:0.5", "200")
    assert load.tools == tools and load.duration_s == 30.0 and load.seed == 3
    assert load.idle == AgentsLoad(agents=[1]).idle  # the agents' own default think time
    assert (load.context_budget, load.summary()) == (8000, 800)  # a tenth of the budget
    with pytest.raises(SettingError) as caught:
        load_fields(LoadSettings(WorkloadFlags("128", "16"), agent=AgentSettings("4", "-1")))
    assert caught.value.settings == ("agent_depth",)


@pytest.mark.slow
def test_a_run_of_agents_on_the_simulator(tmp_path: Path) -> None:
    with start_server_in_thread(builtin_profile("deterministic"), time_scale=20.0) as sim:
        result = CliRunner().invoke(cli_app, [
            "run", "--base-url", sim.base_url, "--agents", "2", "--agent-depth", "2",
            "--tool-latency", "fixed:0.01", "--tool-result-tokens", "20",
            "--think-time", "fixed:0.01", "--duration", "0.5", "--output-tokens", "4",
            "--out", str(tmp_path), "--server-metrics", "off",
        ])
    assert result.exit_code == 0, result.output
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    (level,) = load_run(run_dir).levels
    block = level.kind_block or {}
    assert block["agents"] == 2 and block["tasks_whole"] >= 1
    assert set(block["by_call"]) == {"1", "2", "3"}  # depth 2: two tool calls, then the answer
    assert block["task"]["calls_mean"] == 3
    # plan, the report (HTML and Markdown) show the tasks, the calls by index and their charts
    run = load_run(run_dir)
    plan = plan_runs([run], SLO(ttft_ms=10_000, tps=0)).runs[0]
    titles = [table.title for table in plan.kind_tables or []]
    assert titles == ["agents=2: tasks", "agents=2: calls by index"]
    # judged on its tasks: within a 60 s task time it holds its 2 agents, within 1 ms none
    assert plan.agents is not None and plan.agents.agents_max == 2
    strict = plan_runs([run], SLO(ttft_ms=10_000, tps=0, task_time_s=0.001)).runs[0].agents
    assert strict is not None and strict.agents_max is None
    assert (strict.first_miss, strict.binding) == (2, "task time")
    paths = write_report(build_report([run], ReportOptions(slo=SLO(task_time_s=0.001))),
                         tmp_path / "report")
    html, markdown = paths.html.read_text(), paths.markdown.read_text()
    for text in ("agents=2: tasks", "agents=2: calls by index", "task time distribution",
                 "latency by call index", "no agents level meets P90 task time &lt;=",
                 "first miss 2 agents on task time"):
        assert text in markdown and text in html
    # the Benchmark Report export: each task is a session of its calls
    ((_name, partial),) = run_partials(run)
    sessions = partial["results"]["session_performance"]["sessions"]
    assert sessions["total"] >= block["tasks_whole"]
    assert sessions["total_events"] == level.n_requests

