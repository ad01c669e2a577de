"""The Run page's open-loop mode: the form builds a rate plan; bad rates start nothing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from servecap.core.errors import UserInputError
from servecap.kinds.open_loop import OpenLoad
from servecap.ui.form import RunForm, build_config
from servecap.ui.page_run import OPEN_MODE

pytestmark = pytest.mark.timeout(120)


def test_the_form_builds_an_open_loop_plan(tmp_path: Path) -> None:
    form = RunForm(base_url="http://127.0.0.1:8000/v1", levels=[], rates="0.5, 2",
                   arrival="constant", duration_s=30)
    load = build_config(form, tmp_path).load_spec()
    assert isinstance(load, OpenLoad)
    assert load.rates == [0.5, 2.0] and load.arrival == "constant" and load.duration_s == 30
    closed = build_config(RunForm(base_url="http://127.0.0.1:8000/v1"), tmp_path)
    assert closed.load is None and closed.concurrency == [1, 2, 4, 8]
    with pytest.raises(UserInputError, match="rate must be > 0"):
        build_config(RunForm(base_url="http://127.0.0.1:8000/v1", rates="0"), tmp_path)


def test_rate_mode_on_the_page_rejects_a_zero_rate(app_factory: Any, tmp_path: Path) -> None:
    at = app_factory(tmp_path)
    at.radio(key="load_mode").set_value(OPEN_MODE).run()
    assert "Offered rates (requests/s)" in [t.label for t in at.text_input]
    at.text_input(key="base_url").set_value("http://127.0.0.1:8000/v1")
    at.text_input(key="rates").set_value("0")
    at = at.button(key="start_run").click().run()
    assert not at.exception
    messages = [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]
    assert any("a rate must be > 0" in m for m in messages), messages
    from servecap.ui.shared import run_manager

    assert run_manager().current is None


def test_results_tables_of_a_rate_run() -> None:
    from servecap.api.stored.plan import RunCapacity
    from servecap.ui.tables import capacity_rows, verdict_rows

    capacity = RunCapacity(
        name="r", c_max=None, latency_mean_s=2.0, users=94, rate_max=2.0, top_level="rate=2/s",
        levels=[{"level": "rate=2/s", "ttft": 100.0, "tps": 30.0, "ttft_ok": True,
                 "tps_ok": True, "goodput_rps": 1.5, "slo_attainment": 0.75}],
    )
    row = verdict_rows(capacity, "p90")[0]
    assert row["rate"] == 2 and row["goodput (req/s)"] == 1.5 and row["met both SLOs"] == "75%"
    assert capacity_rows([capacity])[0]["C_max"] == "rate=2/s"
    assert set(capacity.model_dump()) >= {"rate_max", "top_level"}
