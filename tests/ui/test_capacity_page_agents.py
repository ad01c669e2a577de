"""The Capacity page's "agents" search (the CLI's `--load agents`): only the agents' own
settings beside the highest concurrency, checked before any load, and the answer's two
counts, verified and predicted, each labelled."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from servecap.core.config import SLO
from servecap.core.errors import UserInputError
from servecap.storage.capacity_answer import load_answer
from servecap.ui.capacity_form import CapacityForm, build_capacity_job
from servecap.ui.labels import message_of
from tests.ui.conftest import wait_for

pytestmark = pytest.mark.timeout(180)
URL = "http://127.0.0.1:9/v1"


def test_the_form_sends_the_agents_settings_and_checks_them(tmp_path: Path) -> None:
    _, options = build_capacity_job(
        CapacityForm(base_url=URL, load="agents", task_time_slo_s=30.0, max_agents=8,
                     agents_duration_s=20.0, agent_depth="2", start_rate=4.0), SLO(),
        tmp_path / "cap")
    assert (options.load, options.task_time_slo_s, options.max_agents) == ("agents", 30.0, 8)
    assert options.agent_task is not None and options.agent_task.depth == "2"
    assert "start_rate" not in options.model_fields_set  # not the agents' to set
    _, closed = build_capacity_job(CapacityForm(base_url=URL, task_time_slo_s=1.0), SLO(),
                                   tmp_path)
    assert closed.load == "concurrency" and "task_time_slo_s" not in closed.model_fields_set
    for form, label in ((CapacityForm(base_url=URL, load="agents", task_time_slo_s=0.0),
                         "'Task time SLO (s)'"),
                        (CapacityForm(base_url=URL, load="agents", tool_latency="slow"),
                         "'Tool latency (s)'")):
        with pytest.raises(UserInputError) as caught:
            build_capacity_job(form, SLO(), tmp_path)
        assert label in message_of(caught.value)


@pytest.mark.slow
def test_the_page_searches_agents_and_shows_verified_and_predicted(
    app_factory: Any, sim: Any, tmp_path: Path
) -> None:
    at = app_factory(tmp_path)
    at.sidebar.radio(key="page").set_value("Capacity").run()
    at.text_input(key="cap_base_url").set_value(sim.base_url)
    at = at.radio(key="cap_load").set_value("agents").run()
    assert not any(n.key == "cap_start_rate" for n in at.number_input)
    at.number_input(key="cap_input_tokens").set_value(16)
    at.number_input(key="cap_output_tokens").set_value(8)
    at.number_input(key="cap_max_concurrency").set_value(2)
    at.number_input(key="cap_max_agents").set_value(2)
    at.number_input(key="cap_agents_duration_s").set_value(60.0)
    at.text_input(key="cap_agent_depth").set_value("1")
    at.number_input(key="cap_max_time_min").set_value(1.0)
    at = at.button(key="start_capacity").click().run()
    assert not at.exception, at.exception
    from servecap.ui.shared import run_manager

    job = run_manager().current
    assert job is not None and job.request["options"]["load"] == "agents"
    wait_for(lambda: not job.active, timeout=150)
    assert job.state == "done", job.error
    at = at.run()
    answer = load_answer(Path(job.request["config"]["out_dir"]).parent)
    assert answer is not None and answer.agents is not None
    shown = [re.sub(r"\\(.)", r"\1", w.value) for w in [*at.success, *at.warning]]
    assert any(answer.sentence() in text for text in shown), shown
    labels = [m.label for m in at.metric]
    assert "Agents (verified: a level of N met the SLOs)" in labels
    assert "Agents (predicted: streams x agents per stream)" in labels
    streams = answer.agents.predicted_streams
    assert streams is not None
    assert any(f"at {streams:g} streams (" in c.value for c in at.caption)
