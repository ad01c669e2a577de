"""End to end in headless Chromium: `servecap ui`, try it, run, results, SLO, compare, download.

Needs Debian's chromium at /usr/bin/chromium (CI installs it); no browser is downloaded.
Screenshots go to test-artifacts/ui/.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from servecap.sim import SimServerHandle

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "ui"
CHROME_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--no-first-run", "--disable-sync"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.timeout(300),
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs /usr/bin/chromium"),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "servecap ui exited early"
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)  # poll
    raise AssertionError("servecap ui did not come up")


@pytest.fixture
def ui_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    results = tmp_path / "results"
    port = free_port()
    log = (tmp_path / "ui.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "servecap.cli.main", "ui", "--results", str(results),
         "--port", str(port), "--host", "127.0.0.1"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        yield url, results
    finally:
        # SIGTERM to the pid alone, as kill or systemd send it: Streamlit and every child
        # it started (the Try-it simulator) must be gone after it
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(15)
        from tests.ui.test_ui_process import session_members

        deadline = time.monotonic() + 10
        while session_members(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.2)  # poll
        left = session_members(proc.pid)
        if left:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
        assert left == [], f"left running after SIGTERM: {left}"


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def set_field(page: Any, label: str, value: str) -> None:
    field = page.get_by_label(label, exact=True)
    field.fill(value)
    field.press("Enter")
    page.wait_for_timeout(300)


def sidebar_page(page: Any, name: str) -> None:
    page.locator('[data-testid="stSidebar"]').get_by_text(name, exact=True).click()


def expect(locator: Any) -> Any:
    from playwright.sync_api import expect as playwright_expect

    return playwright_expect(locator)


def run_sweep(page: Any, name: str, drop_levels: int) -> None:
    """Two levels (1, 2), two rounds, short outputs; waits until this run is saved."""
    levels = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Concurrency levels")
    levels.locator("input").click()
    for _ in range(drop_levels):  # the default is 1, 2, 4, 8
        levels.locator("input").press("Backspace")
    levels.locator("input").press("Escape")
    page.wait_for_timeout(300)
    set_field(page, "Rounds per level", "2")
    set_field(page, "Output tokens", "16")
    set_field(page, "Run name", name)
    page.get_by_role("button", name="Start run").click()
    page.get_by_text(re.compile(rf"saved in: .*{name}-")).wait_for(timeout=90_000)
    expect(page.get_by_text("Run complete and saved.")).to_be_visible()


def bad_input_starts_nothing(page: Any, results: Path) -> None:
    set_field(page, "Base URL", "not-a-url")
    page.get_by_role("button", name="Start run").click()
    expect(page.get_by_text("Not started: invalid 'Base URL'")).to_be_visible()
    assert not results.exists() or not any(results.iterdir())


def try_it_then_typed_server(page: Any, sim: SimServerHandle) -> None:
    """Run 1 against the app's own "try it" simulator, run 2 against the test's."""
    page.get_by_role("button", name="Try it: start a simulator").click()
    started = re.compile(r"running at http://127.0.0.1.*, at real time")  # the scale, up front
    expect(page.get_by_text(started)).to_be_visible()
    run_sweep(page, "try-it-run", drop_levels=2)
    shot(page, "01-run-complete")
    set_field(page, "Base URL", sim.base_url)
    page.get_by_role("button", name="Refresh models").click()
    expect(page.get_by_text("1 model(s) served")).to_be_visible()
    run_sweep(page, "second-run", drop_levels=0)


def results_follow_the_slo(page: Any) -> None:
    sidebar_page(page, "Results")
    page.get_by_text("Per-level results").wait_for()
    expect(page.locator('[data-testid="stDataFrame"]').first).to_be_visible()
    # the decision opens the page; the charts further down draw once scrolled to
    expect(page.get_by_text(re.compile(r"^Deploy ")).first).to_be_visible()
    page.locator('[data-testid="stPlotlyChart"]').first.scroll_into_view_if_needed()
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    c_max = page.locator('[data-testid="stMetricValue"]').first
    at_least_2 = re.compile(r"^(>=|≥) 2$")  # both levels passed: a lower bound
    expect(c_max).to_have_text(at_least_2)
    shot(page, "02-results")
    set_field(page, "TTFT SLO (ms)", "1")
    expect(c_max).to_have_text("none")
    shot(page, "03-results-strict-slo")
    set_field(page, "TTFT SLO (ms)", "1000")
    expect(c_max).to_have_text(at_least_2)


def compare_and_download(page: Any, target: Path) -> None:
    sidebar_page(page, "History & compare")
    page.get_by_text("Compare runs").wait_for()
    picker = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Compare runs")
    for name in ("try-it-run", "second-run"):
        picker.locator("input").click()
        picker.locator("input").fill(name)
        picker.locator("input").press("Enter")
        page.wait_for_timeout(500)
    picker.locator("input").press("Escape")
    page.get_by_text("SLO compliance").first.wait_for(timeout=60_000)
    expect(page.locator(".js-plotly-plot").first).to_be_visible()
    shot(page, "04-compare")
    page.get_by_role("button", name="Build report").click()
    download_button = page.get_by_role("button", name="Download report (ZIP)")
    download_button.wait_for(timeout=120_000)
    with page.expect_download() as info:
        download_button.click()
    info.value.save_as(target)
    with zipfile.ZipFile(target) as bundle:
        assert "report.html" in bundle.namelist()
    shot(page, "05-report-built")


@pytest.mark.slow
def test_try_it_run_plan_compare_download(
    ui_server: tuple[str, Path], sim: SimServerHandle, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    url, results = ui_server
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROME_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(30_000)
        try:
            page.goto(url)
            page.get_by_text("Run a benchmark").wait_for()
            bad_input_starts_nothing(page, results)
            try_it_then_typed_server(page, sim)
            results_follow_the_slo(page)
            compare_and_download(page, tmp_path / "report.zip")
        except Exception:
            shot(page, "failure")
            raise
        finally:
            browser.close()
    assert len([d for d in results.iterdir() if d.is_dir()]) == 2
