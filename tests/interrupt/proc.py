"""Run `servecap` as a real process, to signal or kill it mid-run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from tests.servers.fault_server import FaultServer

SERVECAP = [sys.executable, "-m", "servecap.cli.main"]


def start_run(base_url: str, out: Path, *extra: str,
              preexec: Callable[[], None] | None = None) -> subprocess.Popen[str]:
    """A long sweep (c=4, many rounds) against `base_url`, output under `out`."""
    args = [*SERVECAP, "run", "--base-url", base_url, "--concurrency", "4", "--rounds", "500",
            "--warmup", "0", "--output-tokens", "4", "--timeout", "5", "--out", str(out),
            *extra]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, preexec_fn=preexec)


def requests_file(out: Path) -> Path | None:
    found = list(out.glob("*/requests.jsonl"))
    return found[0] if found else None


def wait_for_rows(out: Path, n: int, proc: subprocess.Popen[str], limit_s: float = 20) -> Path:
    """Wait until the run has stored `n` rows (or fail with the process's stderr)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        path = requests_file(out)
        if path is not None and len(path.read_bytes().splitlines()) >= n:
            return path
        if proc.poll() is not None:
            break
        time.sleep(0.05)  # poll
    proc.kill()
    _, err = proc.communicate(timeout=10)
    raise AssertionError(f"run never stored {n} rows: {err[-2000:]}")


def wait_until_every_stream_is_mid_request(server: FaultServer, path: Path, streams: int,
                                           limit_s: float = 20) -> None:
    """Wait until the server has read ``streams`` more requests than the run has stored rows:
    each stream then has one in flight (a signal now interrupts every one of them)."""
    deadline = time.monotonic() + limit_s
    while server.completions - len(path.read_bytes().splitlines()) < streams:
        assert time.monotonic() < deadline, "the streams never all had a request in flight"
        time.sleep(0.01)  # poll


def signal_and_wait(proc: subprocess.Popen[str], sig: signal.Signals,
                    limit_s: float = 15) -> tuple[int, str, str]:
    """Send `sig`; return exit status, stdout and stderr. A run that has not exited after
    `limit_s` hangs: `subprocess.TimeoutExpired` fails the test."""
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=limit_s)
    return proc.returncode, out, err


def load_rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def servecap(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SERVECAP, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "COLUMNS": "200"})


__all__ = ["SERVECAP", "load_rows", "servecap", "signal", "signal_and_wait", "start_run",
           "wait_for_rows", "wait_until_every_stream_is_mid_request"]
