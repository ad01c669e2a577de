"""The Run page's agents form (the CLI's `run --agents`): agents per level and the shape of
their tasks, checked by the api's rules in the form's words, and a run of agents from the
page on the simulator."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from servecap.core.errors import UserInputError
from servecap.kinds.agents import AgentsLoad
from servecap.storage.runs import load_run
from servecap.ui.form import RunForm, build_config
from servecap.ui.labels import message_of
from servecap.ui.page_run import AGENTS_MODE
from tests.ui.conftest import wait_for

pytestmark = pytest.mark.timeout(120)
URL = "http://127.0.0.1:8000/v1"


def test_the_form_builds_agents_levels_and_their_tasks(tmp_path: Path) -> None:
    form = RunForm(base_url=URL, agents="2, 4", agent_depth="uniform:1:3",
                   tool_latency="exp:0.5", tool_result_tokens="64", agent_idle="exp:2",
                   agent_duration_s=30.0, context_budget="4000:200", fan_out="2")
    load = build_config(form, tmp_path).load_spec()
    assert isinstance(load, AgentsLoad) and load.agents == [2, 4]
    assert (load.depth, load.tool_latency, load.idle, load.duration_s) == (
        "uniform:1:3", "exp:0.5", "exp:2", 30.0)
    assert (load.context_budget, load.summary_tokens, load.fan_out) == (4000, 200, "2")
    default_idle = build_config(RunForm(base_url=URL, agents="2"), tmp_path).load_spec()
    assert isinstance(default_idle, AgentsLoad) and default_idle.idle == "exp:10"


def test_the_form_replays_a_trace_and_names_a_bad_one(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text('{"task_id": 1, "call_index": 0, "tools": [{"tool_wall_latency_ms": 5}]}'
                    '\n{"task_id": 1, "call_index": 1, "newly_append_tokens": 7}\n')
    load = build_config(RunForm(base_url=URL, agents="2", agent_trace=str(path)),
                        tmp_path).load_spec()
    # the tool latency and result size; no lengths recorded (0: the run's)
    assert isinstance(load, AgentsLoad) and load.trace_json == "[[[0.005],[7],0,[0,0]]]"
    path.write_text("not json\n")
    with pytest.raises(UserInputError) as caught:
        build_config(RunForm(base_url=URL, agents="2", agent_trace=str(path)), tmp_path)
    assert "'Agent trace file (JSONL)'" in message_of(caught.value)


@pytest.mark.parametrize(
    ("field", "value", "label"),
    [("agents", "0", "'Agents per level'"), ("agent_depth", "deep", "'Tool calls per task'"),
     ("tool_latency", "slow", "'Tool latency (s)'"),
     ("context_budget", "10:20", "'Context budget'"), ("fan_out", "-1", "'Sub-agents per task'")],
)
def test_a_bad_agents_field_is_named_by_its_label(
    field: str, value: str, label: str, tmp_path: Path
) -> None:
    form = RunForm(base_url=URL, **{"agents": "2", field: value})
    with pytest.raises(UserInputError) as caught:
        build_config(form, tmp_path)
    assert label in message_of(caught.value)


@pytest.mark.slow
def test_the_page_runs_agents_on_the_simulator(
    app_factory: Any, sim: Any, tmp_path: Path
) -> None:
    at = app_factory(tmp_path)
    at = at.radio(key="load_mode").set_value(AGENTS_MODE).run()
    at.text_input(key="base_url").set_value(sim.base_url)
    at.text_input(key="agents").set_value("2")
    at.text_input(key="agent_depth").set_value("1")
    at.text_input(key="tool_latency").set_value("exp:0.05")
    at.text_input(key="agent_idle").set_value("exp:0.1")
    at.number_input(key="agent_duration_s").set_value(2.0)
    at.number_input(key="output_tokens").set_value(8)
    at = at.button(key="start_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]
    from servecap.ui.shared import run_manager

    job = run_manager().current
    assert job is not None
    wait_for(lambda: not job.active, timeout=100)
    assert job.state == "done", job.error
    run = load_run(Path(job.progress.snapshot().run_dir or ""))
    level = run.levels[0]
    assert str(level.key) == "agents=2"
    assert (level.kind_block or {}).get("tasks_whole", 0) >= 1
    # the Results page judges its agents on the sidebar's task time
    at = at.sidebar.radio(key="page").set_value("Results").run()
    shown = [re.sub(r"\\(.)", r"\1", m.value) for m in at.markdown]
    assert any("holds 2 agents verified within P90 task time <= 60 s" in t for t in shown), shown
    at.sidebar.text_input(key="slo_task").set_value("0.001")
    at = at.run()
    shown = [re.sub(r"\\(.)", r"\1", m.value) for m in at.markdown]
    assert any("no agents level meets P90 task time <= 0.001 s" in t for t in shown), shown
