"""Steady state on a real simulator: a slow start is cropped from the first probe, and a
server that keeps slowing reads "no steady state" instead of a number."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

CLI = [sys.executable, "-m", "servecap.cli.main"]


@contextmanager
def slowing_simulator(log: Path, *flags: str) -> Iterator[str]:
    """The deterministic profile (TTFT 50 ms, ITL 10 ms) at x10 with warm-up or drift."""
    from tests.api.test_verify import simulator

    with simulator("deterministic", 10.0, log, extra=list(flags)) as url:
        yield url


def capacity(url: str, out: Path, *flags: str) -> dict[str, object]:
    done = subprocess.run(
        [*CLI, "capacity", "--base-url", url, "--no-verify", "--out", str(out), *flags],
        capture_output=True, text=True, timeout=500,
    )
    assert done.returncode in (3, 4), done.stdout + done.stderr[-2000:]
    return json.loads((out / "capacity.json").read_text())


def test_a_slow_start_is_cropped(tmp_path: Path) -> None:
    """The first 20 virtual seconds up to 4x slower: the c=1 probe crops its start and
    still passes (the deterministic server never misses: exit 4, not bounded)."""
    with slowing_simulator(tmp_path / "sim.log", "--warmup-s", "20",
                           "--warmup-factor", "4") as url:
        answer = capacity(url, tmp_path / "out", "--max-concurrency", "1")
    (first,) = answer["probes"]
    assert first["verdict"] == "pass"
    assert first["cropped"] >= 5


def test_a_server_that_keeps_slowing_has_no_steady_state(tmp_path: Path) -> None:
    """Steps 3x slower every virtual minute: no crop leaves a steady series."""
    with slowing_simulator(tmp_path / "sim.log", "--drift-per-min", "3") as url:
        answer = capacity(url, tmp_path / "out", "--max-concurrency", "1",
                          "--first-look", "10")
    (first,) = answer["probes"]
    assert first["verdict"] == "no steady state"
    assert answer["status"] == "slo_missed_at_1"
