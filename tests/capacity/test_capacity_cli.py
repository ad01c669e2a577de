"""`servecap capacity` end to end on the simulator: the answer first, every probe a level of
a run `plan` reads, the users verified; bad input exits 2 before any load; an interrupt
keeps the probes and marks the answer incomplete."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from servecap.cli.main import app
from servecap.storage.capacity_answer import EXIT_CODES
from tests.api.test_verify import simulator

CLI = [sys.executable, "-m", "servecap.cli.main"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ttft-slo-ms", "-5"], "--ttft-slo-ms"),
        (["--ttft-slo-ms", "nan"], "--ttft-slo-ms"),
        (["--max-time", "soon"], "--max-time"),
        (["--max-time", "60"], "--max-time"),  # no time left after the users level
        (["--confidence", "1.5"], "--confidence"),
        (["--format", "xml"], "--format"),
        (["--think-time", "exp:-1"], "think"),
        (["--users-turns", "0"], "turns"),
    ],
)
def test_bad_input_exits_2_before_any_load(args, message, tmp_path):
    """The base URL points at a closed port: had any load started, it would fail there."""
    result = CliRunner().invoke(app, ["capacity", "--base-url", "http://127.0.0.1:9/v1",
                                      "--out", str(tmp_path / "out"), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "out").exists()


def test_an_unreachable_server_exits_2(tmp_path):
    result = CliRunner().invoke(app, ["capacity", "--base-url", "http://127.0.0.1:9/v1",
                                      "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "127.0.0.1:9" in result.output
    assert not (tmp_path / "out").exists()  # nothing left behind by a run that never began


@pytest.mark.slow
def test_capacity_on_the_simulator_answers_first_and_verifies_users(tmp_path):
    out = tmp_path / "out"
    with simulator("vllm-direct", 10.0, tmp_path / "sim.log") as base_url:
        done = subprocess.run(
            [*CLI, "capacity", "--base-url", base_url, "--max-time", "5m",
             "--users-duration", "30", "--out", str(out)],
            capture_output=True, text=True, timeout=600,
        )
    answer = json.loads((out / "capacity.json").read_text())
    # a loaded machine may flag the client itself at the first miss: exit 5, same answer
    assert answer["status"] in ("found", "client_bound"), done.stderr[-2000:]
    assert done.returncode == EXIT_CODES[answer["status"]]
    assert answer["complete"]
    first = done.stdout.splitlines()[0]
    assert "users verified (predicted" in first and "C_max" in first
    c_max, miss = answer["c_max"], answer["first_miss"]
    assert miss == c_max + 1  # bisected to the integer
    probes = {p["concurrency"]: p["verdict"] for p in answer["probes"]}
    assert probes[c_max] == "pass" and probes[miss] != "pass"
    assert answer["verified_users"] and answer["predicted_users"]
    # every probe is a level of a run that plan reads like any other
    plan = subprocess.run([*CLI, "plan", answer["probe_run"], "--format", "json"],
                          capture_output=True, text=True, timeout=120)
    assert plan.returncode == 0, plan.stderr
    assert str(c_max) in plan.stdout
    # the report of the probes opens with the answer
    report = subprocess.run([*CLI, "report", answer["probe_run"], "--out", str(tmp_path / "r")],
                            capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr
    summary = (tmp_path / "r" / "report.md").read_text().split("## 1. Executive summary")[1]
    first = next(line for line in summary.splitlines() if line.strip())
    assert first.startswith("**") and "users verified" in first and "C\\_max" in first


# alone: under the parallel suite it once ended with every probe measured, the answer
# complete and exit 5, as if the signal, sent at a probe's end, was lost or never sent (not
# yet known which: docs/validation/test-commands.md); it has passed in every serial run
@pytest.mark.slow
@pytest.mark.alone
def test_an_interrupt_keeps_the_probes_and_marks_the_answer_incomplete(tmp_path):
    out = tmp_path / "out"
    with simulator("vllm-direct", 10.0, tmp_path / "sim.log") as base_url:
        proc = subprocess.Popen(
            [*CLI, "capacity", "--base-url", base_url, "--out", str(out)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "COLUMNS": "200"},
        )
        assert proc.stderr is not None
        for line in proc.stderr:  # wait for the third probe's line, then interrupt
            if line.startswith("c=4:"):
                break
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=120)
    assert proc.returncode == 130
    answer = json.loads((out / "capacity.json").read_text())
    assert answer["complete"] is False
    assert [p["concurrency"] for p in answer["probes"]][:3] == [1, 2, 4]
