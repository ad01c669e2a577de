"""SIGINT/SIGTERM end a run cleanly (exit 130, incomplete, cancelled rows, summary);
a second signal exits at once; SIGKILL leaves a run that show and plan still read."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

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

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_ends_run_incomplete(sig: signal.Signals, tmp_path: Path) -> None:
    server = FaultServer(default="slow_ok")
    out = tmp_path / "out"
    with FaultServerThread(server) as thread:
        proc = start_run(thread.base_url, out)
        path = wait_for_rows(out, 4, proc)
        wait_until_every_stream_is_mid_request(server, path, 4)
        code, _, err = signal_and_wait(proc, sig, limit_s=10)
        sent = server.completions
    assert code == 130, err
    assert "Traceback" not in err
    run_dir = path.parent
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "incomplete" and info["stop_reason"] == "interrupted"
    rows = load_rows(path)
    assert len(rows) == sent  # every request sent has its row, nothing lost
    cancelled = [r for r in rows if r["status"] == "cancelled"]
    assert 1 <= len(cancelled) <= 4
    assert all(r["reason"] == "cancelled" and r["ended_at"] for r in cancelled)
    levels = json.loads((run_dir / "summary.json").read_text())
    assert levels[0]["n_requests"] == len(rows)
    assert levels[0]["n_ok"] == len(rows) - len(cancelled)
    assert levels[0]["n_failed"] == 0  # cancelled is not a server failure


def test_second_signal_exits_at_once(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with FaultServerThread(FaultServer(default="slow_ok")) as thread:
        proc = start_run(thread.base_url, out)
        wait_for_rows(out, 2, proc)
        proc.send_signal(signal.SIGINT)
        code, _, err = signal_and_wait(proc, signal.SIGINT, limit_s=5)  # or it hangs
    assert code == 130, err


def test_sigkill_leaves_a_readable_partial_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with FaultServerThread(FaultServer(default="slow_ok")) as thread:
        proc = start_run(thread.base_url, out)
        path = wait_for_rows(out, 8, proc)
        proc.kill()
        proc.communicate(timeout=10)
    stored = load_rows(path)
    assert len(stored) >= 8 and all(r["status"] == "ok" for r in stored)
    with path.open("a") as handle:  # a write torn by the kill
        handle.write('{"request_id": 999, "concurrency": 4, "stat')
    run_dir = path.parent
    assert not (run_dir / "summary.json").exists()
    shown = servecap("show", str(run_dir), "--format", "json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["info"]["status"] == "incomplete"
    assert data["levels"][0]["n_requests"] == len(stored)
    assert data["levels"][0]["n_ok"] == len(stored)
    planned = servecap("plan", str(run_dir), "--format", "json")
    assert planned.returncode == 0, planned.stderr
    assert json.loads(planned.stdout)["runs"]
    for command in (["show", str(run_dir)], ["plan", str(run_dir)]):
        table = servecap(*command)
        assert table.returncode == 0 and "Traceback" not in table.stderr, table.stderr


def test_sigkilled_run_can_be_reported(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with FaultServerThread(FaultServer(default="slow_ok")) as thread:
        proc = start_run(thread.base_url, out)
        path = wait_for_rows(out, 8, proc)
        proc.kill()
        proc.communicate(timeout=10)
    with path.open("a") as handle:
        handle.write('{"request_id": 5')
    result = invoke_report([str(path.parent), "--out", str(tmp_path / "report")])
    assert result.exception is None, result.exception
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "report" / "report.html").is_file()
