"""The app's Capacity page runs `servecap capacity` against a simulator on loopback: probes
land as the search goes, the answer (the same file the CLI writes) is shown when it is done,
and bad input is named by the form's own labels before any load."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from servecap.api.stored.runs import capacity_sentence, scan_results
from servecap.core.config import SLO
from servecap.core.errors import UserInputError
from servecap.storage.capacity_answer import load_answer
from servecap.ui.capacity_form import CapacityForm, build_capacity_job
from tests.ui.conftest import wait_for

pytestmark = pytest.mark.timeout(180)
URL = "http://127.0.0.1:9/v1"


def _messages(at: Any) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]


def test_the_form_names_its_own_labels(tmp_path: Path) -> None:
    config, options = build_capacity_job(
        CapacityForm(base_url=URL, max_time_min=3, max_concurrency=16), SLO(ttft_ms=500),
        tmp_path / "cap")
    assert config.out_dir == str(tmp_path / "cap" / "runs")
    assert options.max_time_s == 180 and options.max_concurrency == 16
    assert options.ttft_slo_ms == 500 and options.think == "exp:45"
    with pytest.raises(UserInputError, match="time budget"):
        build_capacity_job(CapacityForm(base_url=URL, max_time_min=0.5), SLO(), tmp_path)
    with pytest.raises(UserInputError, match="highest concurrency"):
        build_capacity_job(CapacityForm(base_url=URL, max_concurrency=0), SLO(), tmp_path)
    with pytest.raises(UserInputError, match="base URL"):
        build_capacity_job(CapacityForm(base_url=""), SLO(), tmp_path)


@pytest.mark.slow
def test_an_unreachable_server_is_named_and_nothing_starts(
    app_factory: Any, tmp_path: Path
) -> None:
    at = app_factory(tmp_path)
    at.sidebar.radio(key="page").set_value("Capacity").run()
    at.text_input(key="cap_base_url").set_value(URL)
    at = at.button(key="start_capacity").click().run()
    assert not at.exception
    assert any("Not started" in m and "127.0.0.1:9" in m for m in _messages(at)), _messages(at)
    from servecap.ui.shared import run_manager

    assert run_manager().current is None
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_the_page_finds_capacity_and_shows_the_answer(
    app_factory: Any, sim: Any, tmp_path: Path
) -> None:
    at = app_factory(tmp_path)
    at.sidebar.radio(key="page").set_value("Capacity").run()
    at.text_input(key="cap_base_url").set_value(sim.base_url)
    at.number_input(key="cap_input_tokens").set_value(16)
    at.number_input(key="cap_output_tokens").set_value(8)
    at.number_input(key="cap_max_concurrency").set_value(4)
    at.number_input(key="cap_users_duration_s").set_value(20.0)
    at = at.button(key="start_capacity").click().run()
    assert not at.exception, at.exception
    from servecap.ui.shared import run_manager

    job = run_manager().current
    assert job is not None and job.request["kind"] == "capacity"
    wait_for(lambda: not job.active, timeout=150)
    assert job.state == "done", job.error
    at = at.run()
    out = Path(job.request["config"]["out_dir"]).parent
    answer = load_answer(out)
    assert answer is not None and answer.complete
    # every probe passed up to the cap the form set: a lower bound, said so
    assert [p.concurrency for p in answer.probes] == [1, 2, 4]
    assert answer.c_max == 4 and answer.first_miss is None
    assert "highest concurrency the search may probe" in answer.sentence()
    assert answer.verified_users and answer.users_run
    shown = [re.sub(r"\\(.)", r"\1", w.value) for w in at.warning]
    assert any(answer.sentence() in text for text in shown), shown
    # its runs are in the app's history, and each opens with this answer
    runs = scan_results(tmp_path).runs
    assert {Path(r.path) for r in runs} == {Path(answer.probe_run), Path(answer.users_run)}
    assert all(capacity_sentence(r) == answer.sentence() for r in runs)
