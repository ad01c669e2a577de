"""Results and History & compare pages through AppTest, on saved runs."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(120)


def metrics(at: Any) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_results_page_table_capacity_and_live_slo(app_factory: Any, two_runs: Path) -> None:
    at = app_factory(two_runs)
    at = at.sidebar.radio(key="page").set_value("Results").run()
    assert not at.exception
    levels = at.dataframe[0].value
    assert list(levels["c"]) == [1, 2]
    assert metrics(at)["C_max (P90)"] == ">= 2"  # both tested levels passed: a lower bound
    users_before = metrics(at)["Users (Little's law)"]
    at = at.sidebar.text_input(key="slo_think").set_value("5").run()
    assert metrics(at)["Users (Little's law)"] != users_before
    assert any(m.value.startswith("**Deploy ") for m in at.markdown)  # the decision leads
    at = at.sidebar.text_input(key="slo_ttft").set_value("1").run()
    assert metrics(at)["C_max (P90)"] == "none"
    # a bad entry is named, not clamped or ignored; the last good value stays in force
    for bad, message in (("-5", "must be more than 0 (got -5)"), ("", "enter a number")):
        at = at.sidebar.text_input(key="slo_ttft").set_value(bad).run()
        assert any(message in e.value and "still using 1" in e.value for e in at.sidebar.error)
        assert metrics(at)["C_max (P90)"] == "none"
    at = at.sidebar.text_input(key="slo_ttft").set_value("1000").run()
    assert not at.sidebar.error
    at = at.sidebar.radio(key="slo_stat").set_value("mean").run()
    assert "C_max (mean)" in metrics(at)
    assert len(at.get("plotly_chart")) >= 1
    assert at.button(key="results-build") is not None


def test_results_report_zip_download(app_factory: Any, two_runs: Path) -> None:
    at = app_factory(two_runs)
    at = at.sidebar.radio(key="page").set_value("Results").run()
    at = at.button(key="results-build").click().run(timeout=120)
    assert not at.exception
    downloads = at.get("download_button")
    assert downloads and "ZIP" in downloads[0].proto.label


def test_results_page_without_runs(app_factory: Any, tmp_path: Path) -> None:
    at = app_factory(tmp_path / "nothing-here")
    at = at.sidebar.radio(key="page").set_value("Results").run()
    assert any("No saved runs" in i.value for i in at.info)


def test_history_lists_and_compares(app_factory: Any, two_runs: Path) -> None:
    at = app_factory(two_runs)
    at = at.sidebar.radio(key="page").set_value("History & compare").run()
    assert not at.exception
    history = at.dataframe[0].value
    assert sorted(history["name"]) == ["base", "spec"]
    assert set(history["status"]) == {"complete"}
    assert set(history["levels"]) == {"1, 2"}
    folders = sorted(p.name for p in two_runs.iterdir() if p.is_dir())
    at = at.multiselect(key="compare_runs").set_value(folders).run()
    assert not at.exception
    capacity = at.dataframe[1].value
    assert sorted(capacity["run"]) == ["base", "spec"]
    assert len(at.get("plotly_chart")) >= 5
    assert any(t.value.startswith("SLO compliance") for t in at.text)


def test_history_reports_a_broken_run_and_keeps_the_rest(
    app_factory: Any, two_runs: Path, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    shutil.copytree(two_runs, results)
    broken = results / "broken"
    broken.mkdir()
    (broken / "run.json").write_text("{not json")
    at = app_factory(results)
    at = at.sidebar.radio(key="page").set_value("History & compare").run()
    assert any("broken" in w.value for w in at.warning)
    assert len(at.dataframe[0].value) == 2
