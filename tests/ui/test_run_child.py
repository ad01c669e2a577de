"""The app's run process (`ui.run_child`): its JSON progress lines, bad input as an error
event before any load, and a run whose app went away stops and is saved incomplete."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from servecap.api.run.run_config import RunConfig
from servecap.core.config import ClientOptions
from servecap.sim import SimServerHandle

pytestmark = pytest.mark.timeout(120)


def job(base_url: str, out: Path, rounds: int) -> str:
    config = RunConfig(name="child", concurrency=[1], rounds=rounds, input_tokens=16,
                       output_tokens=8, warmup=0, out_dir=str(out),
                       client=ClientOptions(base_url=base_url))
    return json.dumps({"kind": "run", "config": config.model_dump(mode="json"),
                       "api_key": "sk-child-secret-1234"})


def run_child(stdin: str) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "servecap.ui.run_child"], input=stdin,
                          capture_output=True, text=True, timeout=90, check=False)
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.mark.slow
def test_progress_lines_from_start_to_end(sim: SimServerHandle, tmp_path: Path) -> None:
    events = run_child(job(sim.base_url, tmp_path, rounds=3))
    kinds = [e["event"] for e in events]
    assert kinds[0] == "started" and kinds[-1] == "end"
    assert kinds.count("request") == 3 and kinds.count("level_done") == 1
    assert events[1] == {"event": "level", "level": "c=1", "n_requests": 3}
    run_dir = Path(events[-1]["run_dir"])
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"
    for path in run_dir.rglob("*"):  # the run's br/ partials too
        if path.is_file():
            assert "sk-child-secret-1234" not in path.read_text(errors="replace")


@pytest.mark.slow
def test_bad_input_is_one_error_event(tmp_path: Path) -> None:
    events = run_child(job("http://127.0.0.1:9/v1", tmp_path, rounds=1))
    assert [e["event"] for e in events] == ["error"]
    assert events[0]["user_error"] and "cannot reach" in events[0]["message"]
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_the_run_stops_and_is_saved_when_its_app_goes_away(
    sim: SimServerHandle, tmp_path: Path
) -> None:
    # A stand-in for the app: it starts the child, waits for its first level, and dies.
    app = (
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-m', 'servecap.ui.run_child'],"
        " stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)\n"
        "child.stdin.write(sys.stdin.read()); child.stdin.close()\n"
        "started = child.stdout.readline()\n"
        "print(child.pid, flush=True)\n"
        "import os; os._exit(0)\n"
    )
    done = subprocess.run([sys.executable, "-c", app], input=job(sim.base_url, tmp_path, 5000),
                          capture_output=True, text=True, timeout=60, check=True)
    pid = int(done.stdout.split()[-1])
    deadline = time.monotonic() + 30
    while Path(f"/proc/{pid}").exists():
        with open(f"/proc/{pid}/stat") as stat:
            if stat.read().split(")")[-1].split()[0] == "Z":
                break  # exited, not yet reaped by its new parent
        assert time.monotonic() < deadline, "the orphaned run did not stop"
        time.sleep(0.2)  # poll
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "incomplete" and info["pid"] == pid != os.getpid()
