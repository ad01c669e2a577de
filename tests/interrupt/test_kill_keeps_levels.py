"""SIGKILL after a level finished: the run directory keeps that level's summary."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.interrupt.proc import servecap, start_run
from tests.servers.schedule_server import Schedule, ServerThread, make_app

pytestmark = pytest.mark.slow


def test_sigkill_keeps_every_finished_level_s_summary(tmp_path: Path) -> None:
    out = tmp_path / "out"
    # Each request takes about a second, so the second level runs long after the first ended.
    with ServerThread(make_app(Schedule(ttft_s=1.0, chunk_interval_s=0.01))) as server:
        proc = start_run(server.base_url, out, "--concurrency", "1,2", "--rounds", "2")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not list(out.glob("*/summary.json")):
            assert proc.poll() is None, proc.communicate(timeout=10)[1]
            time.sleep(0.01)  # poll
        still_running = proc.poll() is None
        proc.kill()
        proc.communicate(timeout=10)
    assert still_running
    run_dir = next(out.glob("*/summary.json")).parent
    stored = json.loads((run_dir / "summary.json").read_text())
    assert [(lv["concurrency"], lv["n_ok"]) for lv in stored] == [(1, 2)]
    info = json.loads((run_dir / "run.json").read_text())
    assert set(info["client_health"]) == {"1"}
    shown = servecap("show", str(run_dir), "--format", "json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["info"]["status"] == "incomplete" and data["levels"][0]["concurrency"] == 1
