"""`servecap capacity --load rate` end to end on the simulator: open-loop probes doubling
then bisecting, the answer first with goodput and its users; bad input exits 2 before any
load."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from servecap.cli.main import app
from servecap.sim.server.runner import start_server_process
from servecap.storage.capacity_answer import EXIT_CODES

CLI = [sys.executable, "-m", "servecap.cli.main"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--load", "rate", "--max-concurrency", "8"], "--max-concurrency"),
        (["--start-rate", "2"], "--start-rate"),  # a rate option under --load concurrency
        (["--rate-resolution", "0.1"], "--rate-resolution"),
        (["--load", "poisson"], "--load"),
        (["--load", "rate", "--start-rate", "fast"], "--start-rate"),
        (["--load", "rate", "--start-rate", "0"], "--start-rate"),
        (["--load", "rate", "--start-rate", "-1"], "--start-rate"),
        (["--load", "rate", "--start-rate", "nan"], "--start-rate"),
        (["--load", "rate", "--rate-resolution", "0"], "--rate-resolution"),
        (["--load", "rate", "--rate-resolution", "1.5"], "--rate-resolution"),
        (["--load", "rate", "--rate-resolution", "fine"], "--rate-resolution"),
    ],
)
def test_bad_rate_input_exits_2_before_any_load(args, message, tmp_path):
    """The base URL points at a closed port: had any load started, it would fail there."""
    result = CliRunner().invoke(app, ["capacity", "--base-url", "http://127.0.0.1:9/v1",
                                      "--out", str(tmp_path / "out"), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "127.0.0.1:9" not in result.output  # refused before the server was asked
    assert not (tmp_path / "out").exists()


def _rates(answer: dict) -> list[float]:
    return [probe["rate"] for probe in answer["probes"]]


@pytest.mark.slow
def test_rate_capacity_on_the_simulator_answers_first_with_goodput(tmp_path):
    """vllm-direct at x20 with a 3 s TTFT SLO: a bracket within 25% in a few probes of at
    most 80 requests each, then the users by N = X (R + Z) run as sessions."""
    out = tmp_path / "out"
    sim = start_server_process("vllm-direct", time_scale=20.0)
    try:
        done = subprocess.run(
            [*CLI, "capacity", "--base-url", sim.base_url, "--load", "rate",
             "--ttft-slo-ms", "3000", "--first-look", "20", "--start-rate", "2",
             "--rate-resolution", "0.25", "--max-time", "3m", "--users-duration", "10",
             "--gpus", "1", "--gpu-hour-cost", "2", "--format", "json", "--out", str(out)],
            capture_output=True, text=True, timeout=600,
        )
    finally:
        sim.stop()
    answer = json.loads((out / "capacity.json").read_text())
    assert json.loads(done.stdout) == answer  # --format json prints the answer it wrote
    assert "rate_max" in answer["headline"] and "goodput" in answer["headline"]
    # a loaded machine may flag the client itself at the first miss: exit 5, same answer
    assert answer["status"] in ("found", "client_bound"), done.stderr[-2000:]
    assert done.returncode == EXIT_CODES[answer["status"]]
    assert answer["load"] == "rate" and answer["complete"] and answer["c_max"] is None
    rate = answer["rate"]
    low, high = rate["rate_max"], rate["first_miss"]
    assert low < high and rate["converged"] and high - low <= 0.25 * low
    rates = _rates(answer)
    assert rates[0] == 2.0
    verdicts = {probe["rate"]: probe["verdict"] for probe in answer["probes"]}
    assert verdicts[low] == "pass" and verdicts[high] != "pass"
    assert all(p["n_judged"] <= 80 for p in answer["probes"])  # 4 x --first-look at most
    assert 0 < rate["goodput_rps"] <= low and 0 < rate["attainment"] <= 1
    assert answer["predicted_users"] and answer["users_run"]
    # priced at the boundary's own probe: the highest passing rate, as offered at x20
    at_top = next(p for p in answer["cost"]["points"] if p["at"] == "C_max")
    assert at_top["level"] == f"rate={low * 20:g}/s" and at_top["output_tok_s"]
    # the terminal's sentence is the answer's own, rate first
    text = subprocess.run(
        [*CLI, "report", answer["probe_run"], "--out", str(tmp_path / "r")],
        capture_output=True, text=True, timeout=300,
    )
    assert text.returncode == 0, text.stderr
    summary = (tmp_path / "r" / "report.md").read_text().split("## 1. Executive summary")[1]
    first = next(line for line in summary.splitlines() if line.strip())
    assert "rate\\_max" in first and "goodput" in first and "N = X x" in first


@pytest.mark.slow
def test_an_interrupt_keeps_the_rate_probes_and_marks_the_answer_incomplete(tmp_path):
    """At x10 the probes are offered 20/s, 40/s, ... on the simulator's clock: interrupted
    once the second has ended, the answer keeps the first two at 2 and 4 req/s (real time)."""
    out = tmp_path / "out"
    sim = start_server_process("deterministic", time_scale=10.0)
    try:
        proc = subprocess.Popen(
            [*CLI, "capacity", "--base-url", sim.base_url, "--load", "rate",
             "--start-rate", "2", "--output-tokens", "16", "--out", str(out)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "COLUMNS": "200"},
        )
        assert proc.stderr is not None
        for line in proc.stderr:  # the second probe's summary line, then interrupt
            if line.startswith("rate=40/s:"):
                break
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=120)
    finally:
        sim.stop()
    assert proc.returncode == 130
    answer = json.loads((out / "capacity.json").read_text())
    assert answer["complete"] is False and answer["load"] == "rate"
    assert _rates(answer)[:2] == [2.0, 4.0]
    assert answer["probes"][0]["concurrency"] is None
