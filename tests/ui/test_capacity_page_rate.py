"""The Capacity page's load choice: "rate" searches the highest open-loop Poisson rate (the
CLI's `--load rate`), shows only the rate's own settings, and its answer opens with the rate
and goodput."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from servecap.core.config import SLO
from servecap.core.errors import UserInputError
from servecap.storage.capacity_answer import load_answer
from servecap.ui.capacity_form import CapacityForm, build_capacity_job
from tests.ui.conftest import wait_for

pytestmark = pytest.mark.timeout(180)
URL = "http://127.0.0.1:9/v1"


def test_the_form_sends_only_the_chosen_loads_settings(tmp_path: Path) -> None:
    _, options = build_capacity_job(
        CapacityForm(base_url=URL, load="rate", start_rate=4.0, rate_resolution=0.1,
                     max_concurrency=16), SLO(), tmp_path / "cap")
    assert (options.load, options.start_rate, options.rate_resolution) == ("rate", 4.0, 0.1)
    assert "max_concurrency" not in options.model_fields_set  # not the rate's to set
    _, closed = build_capacity_job(CapacityForm(base_url=URL, start_rate=4.0), SLO(), tmp_path)
    assert closed.load == "concurrency" and "start_rate" not in closed.model_fields_set
    with pytest.raises(UserInputError, match="start rate"):
        build_capacity_job(CapacityForm(base_url=URL, load="rate", start_rate=0.0), SLO(),
                           tmp_path)
    with pytest.raises(UserInputError, match="rate resolution"):
        build_capacity_job(CapacityForm(base_url=URL, load="rate", rate_resolution=2.0), SLO(),
                           tmp_path)


@pytest.mark.slow
def test_the_page_searches_the_rate_and_shows_the_answer(
    app_factory: Any, sim: Any, tmp_path: Path
) -> None:
    at = app_factory(tmp_path)
    at.sidebar.radio(key="page").set_value("Capacity").run()
    at.text_input(key="cap_base_url").set_value(sim.base_url)
    at = at.radio(key="cap_load").set_value("rate").run()
    assert not any(n.key == "cap_max_concurrency" for n in at.number_input)
    at.number_input(key="cap_input_tokens").set_value(16)
    at.number_input(key="cap_output_tokens").set_value(8)
    at.number_input(key="cap_start_rate").set_value(2.0)
    at.number_input(key="cap_max_time_min").set_value(0.5)
    at.checkbox(key="cap_verify").uncheck()
    at = at.button(key="start_capacity").click().run()
    assert not at.exception, at.exception
    from servecap.ui.shared import run_manager

    job = run_manager().current
    assert job is not None and job.request["options"]["load"] == "rate"
    wait_for(lambda: not job.active, timeout=150)
    assert job.state == "done", job.error
    at = at.run()
    answer = load_answer(Path(job.request["config"]["out_dir"]).parent)
    assert answer is not None and answer.load == "rate" and answer.rate is not None
    assert answer.probes[0].rate == 2.0 and answer.probes[0].concurrency is None
    shown = [re.sub(r"\\(.)", r"\1", w.value) for w in [*at.success, *at.warning]]
    assert any(answer.sentence() in text for text in shown), shown
    assert "rate_max" in answer.sentence() or "no rate" in answer.sentence()
