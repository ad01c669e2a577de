"""`servecap compare` end to end on two simulator servers (127.0.0.1), and its bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servecap.cli.main import app

pytestmark = pytest.mark.slow  # each module's fixture runs a whole run

runner = CliRunner()


def _err(result) -> str:  # one message on stderr
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--target", "a=sim:deterministic"], "at least two"),
        (["--target", "a=sim:deterministic", "--target", "a=sim:deterministic"], "duplicate"),
        (["--target", "a=sim:no-such-profile", "--target", "b=sim:deterministic"], "profile"),
        (["--target", "a", "--target", "b=sim:deterministic"], "NAME=BASE_URL"),
        (["--target", "a=ftp://x", "--target", "b=sim:deterministic"], "base-url"),
        (["--target", "a=sim:deterministic*0", "--target", "b=sim:deterministic"], "slowdown"),
        (["--target", "a=sim:deterministic", "--target", "b=sim:deterministic",
          "--target-model", "c=m"], "--target-model"),
        (["--target", "a=sim:deterministic", "--target", "b=sim:deterministic",
          "--repeats", "0"], "--repeats"),
    ],
)
def test_bad_input_exits_2_before_any_load(tmp_path: Path, args: list[str], needle: str) -> None:
    result = runner.invoke(app, ["compare", *args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert needle in _err(result)
    assert not (tmp_path / "out").exists()


def test_different_models_are_refused_after_preflight_without_load(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, [
        "compare", "--target", "a=sim:deterministic", "--target", "b=sim:vllm-direct",
        "--concurrency", "1", "--rounds", "1", "--out", str(out),
    ])
    assert result.exit_code == 2
    assert "--allow-different-models" in _err(result)
    assert not out.exists() or not any(out.iterdir())


@pytest.fixture(scope="module")
def comparison(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cmp")
    result = runner.invoke(app, [
        "compare", "--target", "a=sim:deterministic*2", "--target", "b=sim:deterministic",
        "--repeats", "3", "--concurrency", "1,2", "--rounds", "3", "--output-tokens", "12",
        "--seed", "5", "--out", str(out),
    ])
    assert result.exit_code == 0, result.output
    (path,) = [p for p in out.iterdir() if p.is_dir()]
    return path


def test_comparison_directory_and_interleaved_slots(comparison: Path) -> None:
    data = json.loads((comparison / "comparison.json").read_text())
    assert data["status"] == "complete" and data["interleaved"] and data["repeats"] == 3
    names = [t["name"] for t in data["targets"]]
    assert names == ["a", "b"]
    assert all((comparison / t["run_dir"] / "requests.jsonl").is_file() for t in data["targets"])
    slots = data["slots"]
    assert len(slots) == 2 * 2 * 3
    for level in ("c=1", "c=2"):
        order = [s["target"] for s in slots if s["level"] == level]
        assert order[0:2] == order[4:6] and order[2:4] == order[0:2][::-1]  # AB BA AB
    for s in slots:
        per_slot = 3 * int(s["level"].removeprefix("c="))
        assert s["n_records"] == per_slot and s["summary"]["n_requests"] == per_slot
        assert s["last_id"] - s["first_id"] + 1 == per_slot
    summary = json.loads((comparison / data["targets"][0]["run_dir"] / "summary.json").read_text())
    assert [row["n_requests"] for row in summary] == [9, 18]  # the repeats pooled


def test_a_twice_as_slow_target_loses_and_the_headline_says_so(comparison: Path) -> None:
    data = json.loads((comparison / "comparison.json").read_text())
    (pair,) = data["pairs"]
    for level in pair["levels"]:
        assert level["metrics"]["tps_mean"]["better"] == "b"
        assert level["metrics"]["tps_mean"]["between_repeats"]
    (head,) = data["headlines"]
    assert head["sentences"] and "C_max" in head["sentences"][1]
    assert len(head["speedups"]) == 2 and head["speedups"][0]["estimate"] > 1


def test_a_target_twice_as_slow_never_holds_a_tps_it_cannot_reach(tmp_path: Path) -> None:
    """Two simulator targets a known distance apart: `a` is the deterministic schedule at half
    speed (ITL 20 ms: at most 50 tok/s a user), `b` the same at full speed (10 ms: 100). At a
    75 tok/s objective the headline gives `a` no capacity, whatever the machine's load (a
    schedule is a floor), and every level's speedup says `b` is the faster."""
    result = runner.invoke(app, [
        "compare", "--target", "a=sim:deterministic*2", "--target", "b=sim:deterministic",
        "--repeats", "2", "--concurrency", "1,2", "--rounds", "3", "--output-tokens", "24",
        "--tps-slo", "75", "--seed", "5", "--out", str(tmp_path),
    ])
    assert result.exit_code == 0, result.output
    (path,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    (head,) = json.loads((path / "comparison.json").read_text())["headlines"]
    assert head["slo"]["tps"] == 75
    assert head["a"]["c_max"] is None and head["a"]["users"] is None
    assert [s["level"] for s in head["speedups"]] == ["c=1", "c=2"]
    assert all(s["estimate"] > 1 and s["low"] > 1 for s in head["speedups"]), head["speedups"]
    assert "a: C_max none" in head["sentences"][1]


def _page_data(html: str) -> dict:
    start = html.index('<script type="application/json" id="report-data">')
    body = html[html.index(">", start) + 1:html.index("</script>", start)]
    return json.loads(body)


def test_report_on_a_comparison_leads_with_the_headline(comparison: Path, tmp_path: Path) -> None:
    out = tmp_path / "rep"
    result = runner.invoke(app, ["report", str(comparison), "--out", str(out)])
    assert result.exit_code == 0, result.output
    # the answer's first screen, in the terminal, report.md and report.html alike: the
    # decision sentence, then one chart (06, C_max and users), then the comparison
    first, *_ = result.output.splitlines()
    assert first.startswith("Deploy b: it holds") and "C_max" in first, result.output
    assert result.output.index("Deploy b:") < result.output.index("b vs a:")
    md = (out / "report.md").read_text()
    assert md.startswith("# ")
    decision, chart, pairs = (md.index(s) for s in (
        "**Deploy b: it holds", "charts/06-", "### Comparison headline"))
    assert decision < chart < pairs < md.index("#### b vs a") < md.index("## 2. Setup")
    assert "Interleaved comparison, 3 repeats per level" in md and "charts/C1-users-delta.png" in md
    html = (out / "report.html").read_text()
    summary = html.index('id="summary"')
    assert summary < html.index('id="headline"') < html.index('id="chart-06"') < html.index(
        'id="comparison"') < html.index('id="chart-C1"')
    assert html.count('id="chart-06"') == 1
    lead = html[html.index('id="comparison"'):html.index('id="chart-C1"')]
    assert "users (95% CI" in lead and "more than a" in lead and "C_max" in lead
    figures = _page_data(html)["figures"]
    for chart_id in ("C1", "C2", "C3", "C4", "C5"):
        traces = figures[chart_id]["data"]
        assert traces and all("error_y" in t for t in traces), chart_id
        bars = [v for t in traces for v in t["error_y"]["array"] + t["error_y"]["arrayminus"]]
        assert all(v >= 0 for v in bars) and any(v > 0 for v in bars), chart_id
    assert (out / "charts" / "C3-speedup-intervals.png").stat().st_size > 1000


def test_report_on_separate_runs_says_not_interleaved_or_refuses(
    comparison: Path, tmp_path: Path
) -> None:
    data = json.loads((comparison / "comparison.json").read_text())
    runs = [comparison / t["run_dir"] for t in data["targets"]]
    result = runner.invoke(app, ["report", *map(str, runs), "--out", str(tmp_path / "r1")])
    assert result.exit_code == 0, result.output
    assert "not interleaved" in result.output
    html = (tmp_path / "r1" / "report.html").read_text()
    lead = html[html.index('id="comparison"'):html.index('id="chart-C1"')]
    assert "not interleaved" in lead and "95% CI" in lead
    assert "error_y" in json.dumps(_page_data(html)["figures"]["C4"])
    other = tmp_path / "other"
    shutil.copytree(runs[1], other)
    info = json.loads((other / "run.json").read_text())
    info["config"]["rounds"] = 7
    (other / "run.json").write_text(json.dumps(info))
    result = runner.invoke(
        app, ["report", str(runs[0]), str(other), "--compare", "--out", str(tmp_path / "r2")]
    )
    assert result.exit_code == 2
    assert "different workloads" in _err(result)
    assert not (tmp_path / "r2").exists()


def test_a_pair_must_name_two_targets(tmp_path: Path) -> None:
    result = runner.invoke(app, [
        "compare", "--target", "a=sim:deterministic", "--target", "b=sim:deterministic",
        "--pair", "a:c", "--out", str(tmp_path / "out"),
    ])
    assert result.exit_code == 2
    assert "--pair" in _err(result)
    assert not (tmp_path / "out").exists()


def test_lockstep_flag_runs_a_process_per_target(tmp_path: Path) -> None:
    result = runner.invoke(app, [
        "compare", "--target", "a=sim:deterministic*2", "--target", "b=sim:deterministic",
        "--lockstep", "--repeats", "1", "--concurrency", "1", "--rounds", "2",
        "--output-tokens", "8", "--out", str(tmp_path),
    ])
    assert result.exit_code == 0, result.output
    (path,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    data = json.loads((path / "comparison.json").read_text())
    assert data["schedule"] == "lockstep" and data["status"] == "complete"
    assert "b holds" in result.output


@pytest.mark.browser
def test_the_comparison_charts_draw_their_error_bars_offline(
    comparison: Path, tmp_path: Path
) -> None:
    """report.html in headless Chromium, network refused: C1..C5 are drawn with error bars."""
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        pytest.skip("Debian chromium is not installed")
    out = tmp_path / "rep"
    assert runner.invoke(app, ["report", str(comparison), "--out", str(out)]).exit_code == 0
    errors: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.route("**/*", lambda route: route.continue_()
                       if route.request.url.startswith("file:") else route.abort())
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto((out / "report.html").as_uri())
            for chart_id in ("C1", "C2", "C3", "C4", "C5"):
                page.wait_for_selector(f"#chart-{chart_id}[data-rendered='1'] .main-svg",
                                       timeout=30_000)
                assert page.locator(f"#chart-{chart_id} g.errorbar").count() > 0, chart_id
        finally:
            browser.close()
    assert not errors
