"""Compare page through AppTest: start a comparison of two simulators, read its headline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(240)


@pytest.mark.slow
def test_compare_page_starts_a_comparison_and_shows_its_headline(
    app_factory: Any, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    at = app_factory(results)
    at = at.sidebar.radio(key="page").set_value("Compare").run()
    assert not at.exception
    assert any("No comparisons yet" in i.value for i in at.info)
    at.text_area(key="compare_targets").set_value(
        "slow=sim:deterministic*2\nfast=sim:deterministic"
    )
    at.text_input(key="compare_levels").set_value("1,2")
    at.number_input(key="compare_rounds").set_value(2)
    at.number_input(key="compare_tokens").set_value(8)
    at = at.button[0].click().run()
    assert not at.exception
    from servecap.ui.page_compare import compare_jobs

    job = compare_jobs().latest()
    assert job is not None and job.finished.wait(180), "comparison did not finish"
    assert job.state == "done", job.error
    at = at.run()
    text = " ".join(m.value for m in at.markdown)
    assert "fast vs slow" in text
    assert "C\\_max" in text or "C_max" in text
    shown = text.replace("\\", "")  # the page escapes Markdown punctuation
    assert "95% CI" in shown and "more than slow" in shown  # the users delta, its interval
    charts = at.get("plotly_chart")
    assert len(charts) == 5  # the report's comparison charts, with error bars
    assert all('"error_y"' in c.proto.spec for c in charts)


def test_compare_page_bad_targets_say_why(app_factory: Any, tmp_path: Path) -> None:
    at = app_factory(tmp_path / "r")
    at = at.sidebar.radio(key="page").set_value("Compare").run()
    at.text_area(key="compare_targets").set_value("only=sim:deterministic")
    at = at.button[0].click().run()
    assert any("at least two" in e.value for e in at.error)


@pytest.mark.slow
def test_compare_page_runs_any_kind_from_the_load_field(
    app_factory: Any, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    at = app_factory(results)
    at = at.sidebar.radio(key="page").set_value("Compare").run()
    at.text_area(key="compare_targets").set_value(
        "slow=sim:deterministic*2\nfast=sim:deterministic"
    )
    at.text_input(key="compare_load").set_value("shape=steps:4:2s")  # 4 req/s for 2 s
    at.number_input(key="compare_repeats").set_value(1)
    at.number_input(key="compare_tokens").set_value(8)
    at = at.button[0].click().run()
    assert not at.exception
    from servecap.ui.page_compare import compare_jobs

    job = compare_jobs().latest()
    assert job is not None and job.finished.wait(200), "comparison did not finish"
    assert job.state == "done", job.error
    (comp,) = [p for p in results.iterdir() if p.is_dir()]
    slots = (comp / "comparison.json").read_text()
    assert '"level": "shape=1"' in slots and '"level": "c=' not in slots


@pytest.mark.slow
def test_compare_page_takes_the_prefix_cache_settings_and_the_runs_load_rules(
    app_factory: Any, tmp_path: Path
) -> None:
    """The page's load goes through the run's own rules (a setting the load would ignore is
    named by its label), and its prefix-cache reset reaches every target's run."""
    from servecap.ui.page_compare import _workload

    prefix = {"prefix_hit_rate": 0.5, "reset_prefix_cache": "auto"}
    workload = _workload("1,2", "", 2, 8, prefix, tmp_path)
    assert workload.concurrency == [1, 2] and workload.reset_prefix_cache == "auto"
    assert workload.workload is not None and workload.workload.prefix_hit_rate == 0.5
    from_text = _workload("1,2", "rate=2", 2, 8, {**prefix, "prefix_hit_rate": None}, tmp_path)
    assert from_text.load is not None and from_text.load_spec().levels()

    at = app_factory(tmp_path / "results")
    at = at.sidebar.radio(key="page").set_value("Compare").run()
    at.text_area(key="compare_targets").set_value("a=sim:deterministic\nb=sim:deterministic")
    at.text_input(key="compare_levels").set_value("1")
    at.number_input(key="compare_rounds").set_value(2)
    at.number_input(key="compare_tokens").set_value(8)
    at.number_input(key="compare_repeats").set_value(1)
    at.text_input(key="compare_workers").set_value("1")
    at.radio(key="compare_reset_mode").set_value("auto")  # a form's values apply on submit
    at = at.button[0].click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    from servecap.ui.page_compare import compare_jobs

    job = compare_jobs().latest()
    assert job is not None and job.finished.wait(180), "comparison did not finish"
    assert job.state == "done", job.error
    import json

    (comp,) = [p for p in (tmp_path / "results").iterdir() if p.is_dir()]
    stored = json.loads((comp / "comparison.json").read_text())
    for target in stored["targets"]:
        info = json.loads((comp / target["run_dir"] / "run.json").read_text())
        assert info["config"]["reset_prefix_cache"] == "auto"
        assert info["config"]["workers"] == 1  # the page's worker processes reach the run
