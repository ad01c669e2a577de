"""report.html in headless Chromium with the network off: charts render, controls recompute."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from servecap.api.stored.report import ReportPaths
from servecap.report.charts_spec import CHARTS

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists() and shutil.which("chromium") is None,
                       reason="Debian chromium is not installed"),
]


def _capacity(page) -> list[str]:
    return page.locator("#capacity-live tbody tr").all_inner_texts()


def _heatmap_z(page) -> list[list[float]]:
    """The z matrix chart 09 is drawn with now (read back from plotly's own state)."""
    return page.evaluate("document.getElementById('chart-09').data[0].z")


def _capacity_bars(page) -> dict[str, list[float]]:
    """Chart 06's bars as plotly holds them now, by trace name."""
    return page.evaluate(
        "Object.fromEntries(document.getElementById('chart-06').data"
        ".map(t => [t.name, t.y]))")


def _labels_clear_of_the_edge(page) -> None:
    """Chart 09's row labels are whole (inside the chart) and its axis title clear of them."""
    box = page.locator("#chart-09").bounding_box()
    labels = page.locator("#chart-09 .ytick text").all()
    assert labels
    lefts = [label.bounding_box()["x"] for label in labels]
    assert min(lefts) >= box["x"], (lefts, box)
    title = page.locator("#chart-09 .ytitle").bounding_box()
    assert title["x"] + title["width"] <= min(lefts), (title, lefts)
    page.locator("#chart-09").screenshot(path=str(ARTIFACTS / "heatmap.png"))


@pytest.mark.slow
def test_report_renders_offline(seed_report: ReportPaths) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    errors: list[str] = []
    blocked: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.route("**/*", lambda route: (
                route.continue_() if route.request.url.startswith("file:")
                else (blocked.append(route.request.url), route.abort())))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            ARTIFACTS.mkdir(exist_ok=True)
            page.goto(seed_report.html.as_uri())
            for chart in CHARTS:
                page.wait_for_selector(f"#chart-{chart.id}[data-rendered='1'] .main-svg",
                                       timeout=30_000)
            before = _capacity(page)
            heat_before = _heatmap_z(page)
            bars_before = _capacity_bars(page)
            assert any("vllm-direct" in row and "427" in row for row in before)
            assert page.locator("#headline-live").is_hidden()
            _labels_clear_of_the_edge(page)
            page.fill("#slo-ttft", "500")
            page.dispatch_event("#slo-ttft", "change")
            after = _capacity(page)
            assert after != before
            # chart 06 and the summary's decision follow the controls like the tables
            bars_after = _capacity_bars(page)
            assert bars_after["users (p90)"] != bars_before["users (p90)"]
            assert bars_after["C_max (p90)"][0] == 4  # vllm-direct at TTFT <= 500 ms
            live = page.locator("#headline-live").inner_text()
            assert live.startswith("With the SLOs set below: deploy ") and "500 ms" in live
            heat_after = _heatmap_z(page)  # chart 09 follows the controls too
            assert heat_after != heat_before
            assert sum(map(sum, heat_after)) < sum(map(sum, heat_before))  # stricter TTFT
            assert any("vllm-direct" in row and "\t4\t" in row for row in after)
            page.select_option("#slo-stat", "mean")
            page.fill("#slo-ttft", "1000")
            page.dispatch_event("#slo-ttft", "change")
            assert any("sglang-direct" in r and "717" in r for r in _capacity(page))
            page.evaluate("window.scrollTo(0, 0)")
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "report.png"), full_page=False)
        finally:
            browser.close()
    assert errors == []
    assert blocked == []
