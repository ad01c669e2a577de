"""The app's Capacity page with several targets: the form checks them by its own labels
before any load, and a search of two targets shows the comparison, a row per target and
the delta (the same `capacity.json` that `servecap capacity --target` writes)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from servecap.core.config import SLO
from servecap.core.errors import UserInputError
from servecap.storage.capacity_targets import load_targets_answer
from servecap.ui.capacity_form import CapacityForm, build_capacity_targets_job
from servecap.ui.labels import message_of
from tests.ui.conftest import wait_for

pytestmark = pytest.mark.timeout(180)
URL = "http://127.0.0.1:9/v1"


def test_the_form_checks_its_targets_by_their_labels(tmp_path: Path) -> None:
    form = CapacityForm(base_url="", targets=f"a={URL}\n\nb={URL}\n")
    config, _, specs = build_capacity_targets_job(form, SLO(), tmp_path / "cap")
    assert specs == [f"a={URL}", f"b={URL}"] and config.out_dir == str(tmp_path / "cap" /
                                                                       "runs")
    for bad, said in ((CapacityForm(base_url=URL, targets=f"a={URL}\nb={URL}"), "'Targets'"),
                      (CapacityForm(base_url="", targets=f"a={URL}"), "at least two"),
                      (CapacityForm(base_url="", targets=f"a={URL}\na={URL}"), "duplicate")):
        with pytest.raises(UserInputError) as caught:
            build_capacity_targets_job(bad, SLO(), tmp_path / "cap")
        assert said in message_of(caught.value)
    assert not (tmp_path / "cap").exists()


@pytest.mark.slow
def test_two_targets_show_the_comparison(app_factory: Any, sim: Any, tmp_path: Path) -> None:
    at = app_factory(tmp_path)
    at.sidebar.radio(key="page").set_value("Capacity").run()
    at.text_area(key="cap_targets").set_value(f"a={sim.base_url}\nb={sim.base_url}")
    at.number_input(key="cap_output_tokens").set_value(8)
    at.number_input(key="cap_max_concurrency").set_value(2)
    at.checkbox(key="cap_verify").uncheck()
    at = at.button(key="start_capacity").click().run()
    assert not at.exception, at.exception
    from servecap.ui.shared import run_manager

    job = run_manager().current
    assert job is not None and job.request["targets"]
    wait_for(lambda: not job.active, timeout=150)
    assert job.state == "done", job.error
    at = at.run()
    answer = load_targets_answer(Path(job.request["config"]["out_dir"]).parent)
    assert answer is not None and answer.complete
    assert [(t.target, t.concurrency) for t in answer.order] == [
        ("a", 1), ("b", 1), ("a", 2), ("b", 2)]
    shown = [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]
    assert any(answer.sentence() in text for text in shown), shown
    assert len(at.dataframe) >= 2  # a row per target, and the delta
