"""Results and History & compare pages through AppTest, on saved runs."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(120)


def metrics(at: Any) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


@pytest.mark.slow
def test_results_page_table_capacity_and_live_slo(app_factory: Any, two_runs: Path) -> None:
    at = app_factory(two_runs)
    at = at.sidebar.radio(key="page").set_value("Results").run()
    assert not at.exception
    # the answer first, as in the report: the decision, the charts, then every level
    headers = [h.value for h in at.subheader]
    assert headers.index("Capacity") < headers.index("Charts") < headers.index(
        "Per-level results")
    assert at.markdown[0].value.startswith("**Deploy ")
    levels = next(d.value for d in at.dataframe if "c" in d.value.columns
                  and "ITL mean (ms)" in d.value.columns)
    assert list(levels["c"]) == [1, 2]
    assert metrics(at)["C_max (P90)"] == ">= 2"  # both tested levels passed: a lower bound
    users_before = metrics(at)["Users (predicted, Little's law)"]
    assert metrics(at)["Users (verified, measured)"] == "not verified"
    at = at.sidebar.text_input(key="slo_think").set_value("5").run()
    assert metrics(at)["Users (predicted, Little's law)"] != users_before
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


@pytest.mark.slow
def test_results_report_zip_download(app_factory: Any, two_runs: Path) -> None:
    at = app_factory(two_runs)
    at = at.sidebar.radio(key="page").set_value("Results").run()
    at = at.button(key="results-build").click().run(timeout=120)
    assert not at.exception
    downloads = at.get("download_button")
    assert downloads and "ZIP" in downloads[0].proto.label


@pytest.mark.slow
def test_results_page_finds_the_runs_a_comparison_folder_holds(
    app_factory: Any, two_runs: Path, tmp_path: Path
) -> None:
    """`servecap demo` keeps its runs in demo-output/runs/compare-<time>/: the Results page
    given demo-output/runs (or demo-output) lists them."""
    nested = tmp_path / "demo-output" / "runs" / "compare-20261207T000000Z"
    shutil.copytree(two_runs, nested)
    (nested / "comparison.json").write_text("{}")
    for results in (tmp_path / "demo-output" / "runs", tmp_path / "demo-output"):
        at = app_factory(results)
        at = at.sidebar.radio(key="page").set_value("Results").run()
        assert not at.exception
        assert not any("No saved runs" in i.value for i in at.info)
        options = at.selectbox(key="results_run").options
        assert len(options) == 2, options


def test_ui_without_a_flag_opens_the_demo_output_when_there_are_no_results(
    tmp_path: Path,
) -> None:
    from servecap.cli.ui_cmd import default_results

    assert default_results(tmp_path) == Path("results")
    (tmp_path / "demo-output").mkdir()
    assert default_results(tmp_path) == Path("demo-output")
    (tmp_path / "results").mkdir()
    assert default_results(tmp_path) == Path("results")


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


@pytest.mark.slow
def test_results_page_shows_verified_beside_predicted(app_factory: Any, tmp_path: Path) -> None:
    from tests.api.test_verified_display import sweep_and_verify

    sweep, verify = sweep_and_verify(tmp_path)
    at = app_factory(tmp_path)
    at = at.sidebar.radio(key="page").set_value("Results").run()
    at = at.selectbox(key="results_run").set_value(sweep.name).run()
    at = at.sidebar.text_input(key="slo_think").set_value("4.5").run()
    assert not at.exception
    shown = metrics(at)
    assert shown["Users (predicted, Little's law)"] == "256"
    assert shown["Users (verified, measured)"] == "90"
    assert any("verified 90 users (measured)" in m.value.replace("\\", "") for m in at.markdown)
    assert any(verify.name in c.value.replace("\\", "") for c in at.caption)
    at = at.selectbox(key="results_run").set_value(verify.name).run()  # the verify run itself
    shown = metrics(at)
    assert shown["Users (predicted, Little's law)"] == "256"
    assert shown["Users (verified, measured)"] == "90"


@pytest.mark.slow
def test_results_page_starts_a_verify_run(app_factory: Any, sim: Any, tmp_path: Path) -> None:
    import json

    from servecap.ui.shared import run_manager
    from tests.ui.conftest import make_run, wait_for

    sweep = make_run(sim, tmp_path, "base", [1, 2])
    at = app_factory(tmp_path)
    at = at.sidebar.radio(key="page").set_value("Results").run()
    at = at.sidebar.text_input(key="slo_think").set_value("0.2").run()
    at.text_input(key="verify_think").set_value("exp:0.2")
    at.text_input(key="verify_turns").set_value("2")
    at.number_input(key="verify_duration").set_value(2.0)
    at.selectbox(key="verify_search").set_value("never")
    at = at.button(key="start_verify").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    job = run_manager().current
    assert job is not None and job.request["kind"] == "verify"
    assert (job.request["options"]["search"], job.request["options"]["search_on_miss"]) == (
        False, False)  # "never"
    wait_for(lambda: not job.active, timeout=90)
    assert job.state == "done", job.error
    (verify_dir,) = [p for p in tmp_path.iterdir() if p.name.startswith("base-verify-")]
    result = json.loads((verify_dir / "verification.json").read_text())
    assert Path(result["source_run"]).name == sweep.name
    at = at.run()
    shown = metrics(at)["Users (verified, measured)"]
    # no search: the predicted N is verified, or the page says that N (only) did not pass
    predicted = result["predicted_users"]
    assert shown == (str(predicted) if result["verified_users"] else f"{predicted} did not pass")


@pytest.mark.slow
def test_results_page_starts_an_agents_verify_run(app_factory: Any, sim: Any,
                                                  tmp_path: Path) -> None:
    """The agents form: C_max agents first, then the predicted N, judged on the sidebar's
    task time; the verify run's own Results page says the agents it holds, both counts."""
    import json

    from servecap.ui.shared import run_manager
    from tests.ui.conftest import make_run, wait_for

    make_run(sim, tmp_path, "base", [1, 2])
    at = app_factory(tmp_path)
    at = at.sidebar.radio(key="page").set_value("Results").run()
    at = at.sidebar.text_input(key="slo_task").set_value("5").run()
    at.text_input(key="va_depth").set_value("1")
    at.text_input(key="va_tool_latency").set_value("exp:0.02")
    at.text_input(key="va_idle").set_value("exp:0.1")
    at.number_input(key="va_duration").set_value(2.0)
    at = at.button(key="start_verify_agents").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    job = run_manager().current
    assert job is not None and job.request["kind"] == "verify_agents"
    assert job.request["options"]["slo"]["task_time_s"] == 5.0
    wait_for(lambda: not job.active, timeout=90)
    assert job.state == "done", job.error
    (verify_dir,) = [p for p in tmp_path.iterdir() if p.name.startswith("base-verify-")]
    result = json.loads((verify_dir / "agents_verification.json").read_text())
    assert result["calibration"] == result["c_max"] == 2 and result["predicted_agents"]
    at = at.run()  # the page's list of runs now holds the verify run
    at = at.selectbox(key="results_run").set_value(verify_dir.name).run()
    shown = [m.value.replace("\\", "") for m in at.markdown]
    assert any(f"agents verified (predicted {result['predicted_agents']} at" in t
               for t in shown), shown


@pytest.mark.slow
def test_results_page_predicts_beside_the_run(app_factory: Any, two_runs: Path,
                                              tmp_path: Path) -> None:  # fmt: skip
    """A profile picked on the Results page predicts the run's own levels at its lengths
    (16 in / 8 out here), beside the measurement; a bad file is named, not a traceback."""
    at = app_factory(two_runs)
    at = at.sidebar.radio(key="page").set_value("Results").run()
    before = len(at.dataframe)
    assert "deterministic" not in at.selectbox(key="results-predict").options  # predicts nothing
    at = at.selectbox(key="results-predict").set_value("vllm-direct").run()
    assert not at.exception
    # captions are Markdown-escaped (`ui.text.plain`)
    titles = [c.value.replace("\\", "") for c in at.caption if "beside measured" in c.value]
    assert any("profile vllm-direct at 16/8" in t and "held-out error" in t for t in titles)
    assert any(t.startswith("Capacity predicted beside measured") for t in titles)
    assert len(at.dataframe) == before + 2
    table = next(d.value for d in at.dataframe if "level" in d.value.columns)
    assert list(table["level"]) == ["1", "2"]
    assert " / " in table.iloc[0]["TTFT mean ms (measured / predicted)"]
    capacity = next(d.value for d in at.dataframe if "statistic" in d.value.columns)
    assert all(" in " in text and "draws" in text
               for text in capacity["predicted C_max across seeded draws"])  # fmt: skip
    missing = tmp_path / "nope.toml"
    at = at.text_input(key="results-predict-file").set_value(str(missing)).run()
    errors = [e.value.replace("\\", "") for e in at.error]
    assert any(e.startswith("profile: ") and "nope.toml" in e for e in errors), errors
    assert not at.exception


def test_results_page_opens_with_the_capacity_answer(app_factory: Any, two_runs: Path,
                                                     tmp_path: Path) -> None:
    """A run `servecap capacity` made (OUT/runs/RUN beside OUT/capacity.json): its answer
    leads the Results page, before the sidebar's own decision."""
    from servecap.core.config import SLO
    from servecap.storage.capacity_answer import CapacityAnswer, write_answer

    out = tmp_path / "capacity-output"
    source = next(p for p in two_runs.iterdir() if p.name.startswith("base"))
    probe_run = out / "runs" / source.name
    shutil.copytree(source, probe_run)
    answer = CapacityAnswer(
        deployment="base", status="found", slo=SLO(), confidence=0.95, c_max=2,
        first_miss=3, binding_slo="TTFT", latency_mean_s=1.0, predicted_users=90,
        verified_users=80, requests=500, elapsed_s=60.0, probes=[], probe_run=str(probe_run))
    write_answer(out, answer)
    at = app_factory(out / "runs")
    at = at.sidebar.radio(key="page").set_value("Results").run()
    assert not at.exception
    assert at.markdown[0].value.startswith("**base holds 80 users verified")
    assert any(m.value.startswith("**Deploy ") for m in at.markdown[1:])
