"""A stopped run looks stopped everywhere downstream: its partial level is marked and kept
out of C_max unless asked, `show`, `plan` and the report say "incomplete", and a SIGKILLed
run's `run.json` no longer says running once its process is found gone."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from servecap.core.config import SLO
from servecap.core.summary import LevelSummary
from servecap.kinds.registry import kind_of
from servecap.stats.capacity import plan_levels
from tests.faults.runs import invoke_report
from tests.interrupt.proc import (
    load_rows,
    servecap,
    signal_and_wait,
    start_run,
    wait_for_rows,
    wait_until_every_stream_is_mid_request,
)
from tests.servers.fault_server import FaultServer, FaultServerThread


def _level(c: int, partial: bool | None = None) -> LevelSummary:
    return LevelSummary(concurrency=c, n_requests=10, n_ok=10, error_rate=0.0, ttft_p90_ms=10,
                        tps_p90=50, latency_mean_s=1.0, partial=partial)


def test_a_partial_level_sets_no_c_max_unless_asked() -> None:
    levels = [_level(1), _level(2), _level(4, partial=True)]
    assert plan_levels(levels, SLO(), kind_of).c_max == 2
    assert plan_levels(levels, SLO(), kind_of, include_partial=True).c_max == 4
    assert plan_levels([_level(1), _level(2, partial=False)], SLO(), kind_of).c_max == 2


@pytest.mark.slow
def test_a_killed_run_is_incomplete_with_its_partial_level(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with FaultServerThread(FaultServer(default="slow_ok")) as thread:
        proc = start_run(thread.base_url, out, "--concurrency", "1,4", "--rounds", "3")
        path = wait_for_rows(out, 3 + 4, proc)  # c=1 done, c=4 under way
        proc.kill()
        proc.communicate(timeout=10)
    run_dir = path.parent
    stored = load_rows(path)
    assert 7 <= len(stored) < 15
    assert json.loads((run_dir / "run.json").read_text())["status"] == "running"

    shown = servecap("show", str(run_dir), "--format", "json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["info"]["status"] == "incomplete"
    assert [(lv["concurrency"], lv["partial"]) for lv in data["levels"]] == [
        (1, False), (4, True)]
    on_disk = json.loads((run_dir / "run.json").read_text())
    assert on_disk["status"] == "incomplete" and "killed" in on_disk["stop_reason"]

    table = servecap("show", str(run_dir))
    assert "incomplete" in table.stdout and "partial level c=4" in table.stdout
    plan = ["plan", str(run_dir), "--tps-slo", "1", "--format", "json"]
    assert json.loads(servecap(*plan).stdout)["runs"][0]["c_max"] == 1
    asked = json.loads(servecap(*plan, "--include-partial").stdout)
    assert asked["runs"][0]["c_max"] == 4
    assert "incomplete" in servecap("plan", str(run_dir), "--tps-slo", "1").stdout

    reported = invoke_report([str(run_dir), "--out", str(tmp_path / "report")])
    assert reported.exit_code == 0, reported.stderr
    for name in ("report.md", "report.html"):
        text = (tmp_path / "report" / name).read_text(encoding="utf-8")
        assert "incomplete" in text and "partial level c=4" in text, name


@pytest.mark.slow
def test_an_interrupted_level_is_partial_in_the_summary(tmp_path: Path) -> None:
    out = tmp_path / "out"
    server = FaultServer(default="slow_ok")
    with FaultServerThread(server) as thread:
        proc = start_run(thread.base_url, out)
        path = wait_for_rows(out, 4, proc)
        wait_until_every_stream_is_mid_request(server, path, 4)
        code, _, err = signal_and_wait(proc, signal.SIGINT)
    assert code == 130, err
    levels = json.loads((path.parent / "summary.json").read_text())
    assert levels[0]["partial"] is True


@pytest.mark.slow
def test_insecure_is_shown_by_show_and_the_report(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with FaultServerThread(FaultServer()) as thread:
        done = servecap("run", "--base-url", thread.base_url, "--concurrency", "1",
                        "--rounds", "2", "--warmup", "0", "--output-tokens", "4",
                        "--insecure", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "--insecure" in servecap("show", str(out)).stdout
    reported = invoke_report([str(out), "--out", str(tmp_path / "report")])
    assert reported.exit_code == 0, reported.stderr
    for name in ("report.md", "report.html"):
        text = (tmp_path / "report" / name).read_text(encoding="utf-8")
        assert "TLS verification off" in text, name
