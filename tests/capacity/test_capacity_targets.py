"""`servecap capacity --target A=URL --target B=URL`: the probes take turns between the
targets, each target's C_max is its own, and the delta with its interval says which holds
more; bad input exits 2 before any load; an interrupt keeps what was measured."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servecap.api.capacity.turns import Turns
from servecap.cli.capacity_targets import print_targets
from servecap.cli.main import app
from servecap.core.config import SLO
from servecap.storage.capacity_answer import EXIT_CODES, CapacityAnswer
from servecap.storage.capacity_targets import (
    CapacityTargetsAnswer,
    ProbeTurn,
    capacity_delta,
    winner,
)
from tests.api.test_verify import simulator

CLI = [sys.executable, "-m", "servecap.cli.main"]
CLOSED = "http://127.0.0.1:9/v1"  # had any load started, it would fail here


def _answer(name: str, c_max: int | None, first_miss: int | None,
            status: str = "found") -> CapacityAnswer:
    return CapacityAnswer(
        deployment=name, status=status, slo=SLO(), confidence=0.95, c_max=c_max,  # type: ignore[arg-type]
        first_miss=first_miss, binding_slo="TTFT", latency_mean_s=1.0, predicted_users=None,
        requests=10, elapsed_s=1.0, probes=[],
    )


def test_the_delta_is_interval_arithmetic_on_the_brackets():
    a, b = _answer("a", 2, 3), _answer("b", 12, 14)  # b's C_max lies in [12, 13]
    delta = capacity_delta(a, b)
    assert (delta.c_max, delta.low, delta.high) == (10, 10, 11)
    assert delta.better == "b" and winner([a, b]) == "b"
    overlapping = capacity_delta(_answer("a", 4, 9), _answer("b", 6, 7))
    assert overlapping.low == -2 and overlapping.high == 2 and overlapping.better == "undecided"
    assert winner([_answer("a", 4, 9), _answer("b", 6, 7)]) is None


def test_an_unbounded_target_leaves_the_delta_open_above():
    delta = capacity_delta(_answer("a", 2, 3), _answer("b", 8, None, "not_bounded"))
    assert delta.low == 6 and delta.high is None and delta.better == "b"
    missed = capacity_delta(_answer("a", None, 1, "slo_missed_at_1"), _answer("b", 1, 2))
    assert (missed.low, missed.high, missed.better) == (1, 1, "b")


def test_the_answer_prints_the_comparison_first_or_as_json(capsys):
    a, b = _answer("a", 2, 3), _answer("b", 12, 14)
    answer = CapacityTargetsAnswer(
        targets=[a, b], urls={"a": CLOSED, "b": CLOSED},
        order=[ProbeTurn(target="a", concurrency=1), ProbeTurn(target="b", concurrency=1)],
        deltas=[capacity_delta(a, b)], winner=winner([a, b]), verified="none", requests=20,
        elapsed_s=2.0)
    print_targets(answer, "text")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("b has the higher capacity: a C_max 2 [2..2]; b C_max 12 "
                               "[12..13]; b - a = +10 streams (interval +10..+11)")
    assert lines[-1] == "probes in the order run: a c=1, b c=1"
    print_targets(answer, "json")
    assert CapacityTargetsAnswer.model_validate_json(capsys.readouterr().out) == answer
    assert answer.exit_code() == 0


def test_turns_alternate_and_the_rotation_goes_on_without_a_finished_target():
    turns = Turns(["a", "b"])
    probes = {"a": [1, 2, 4], "b": [1, 2, 4, 8, 16]}

    def search(name: str) -> None:
        for c in probes[name]:
            assert turns.take(name)
            turns.ran(name, c)
            turns.pass_on(name)
        turns.leave(name)

    threads = [threading.Thread(target=search, args=(n,)) for n in ("b", "a")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [(t.target, t.concurrency) for t in turns.order] == [
        ("a", 1), ("b", 1), ("a", 2), ("b", 2), ("a", 4), ("b", 4), ("b", 8), ("b", 16)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--target", "a"], "NAME=BASE_URL"),
        (["--target", f"a={CLOSED}"], "at least two"),
        (["--target", f"a={CLOSED}", "--target", f"a={CLOSED}"], "duplicate"),
        (["--target", f"a={CLOSED}", "--target", f"b={CLOSED}", "--base-url", CLOSED],
         "--base-url"),
        (["--target", f"a/x={CLOSED}", "--target", f"b={CLOSED}"], "folder"),
        (["--target", f"a={CLOSED}", "--target", f"b={CLOSED}", "--max-time", "150"],
         "--max-time"),  # two users levels of 60 s leave no time to search
    ],
)
def test_bad_targets_exit_2_before_any_load(args, message, tmp_path):
    result = CliRunner().invoke(app, ["capacity", "--out", str(tmp_path / "out"), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "out").exists()


def test_an_unreachable_target_exits_2_and_leaves_nothing(tmp_path):
    result = CliRunner().invoke(app, ["capacity", "--target", f"a={CLOSED}", "--target",
                                      f"b={CLOSED}", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "127.0.0.1:9" in result.output
    assert not (tmp_path / "out").exists()


def _alternate_while_both_search(order: list[dict]) -> None:
    """Until one target's last probe, no target probes twice in a row."""
    names = [turn["target"] for turn in order]
    both = min(len(names) - 1 - names[::-1].index(n) for n in set(names))
    assert all(x != y for x, y in zip(names[: both + 1], names[1: both + 1], strict=False))
    assert names[:2] == ["a", "b"]


@pytest.mark.slow
def test_two_simulators_a_known_distance_apart(tmp_path):
    """sglang-spec holds about 2 streams within the SLOs, sglang-direct about 16: capped at
    4 the search leaves b unbounded above (a short search), and the delta's interval is
    above 0."""
    out = tmp_path / "out"
    with (simulator("sglang-spec", 20.0, tmp_path / "a.log") as url_a,
          simulator("sglang-direct", 20.0, tmp_path / "b.log") as url_b):
        done = subprocess.run(
            [*CLI, "capacity", "--target", f"a={url_a}", "--target", f"b={url_b}",
             "--max-concurrency", "4", "--users-duration", "10", "--max-time", "5m",
             "--out", str(out)],
            capture_output=True, text=True, timeout=600,
        )
    answer = json.loads((out / "capacity.json").read_text())
    a, b = answer["targets"]
    assert b["status"] == "not_bounded" and b["c_max"] == 4, done.stderr[-2000:]
    # the highest of the targets' codes (4: b's cap, not a miss; a loaded machine may flag
    # the client itself at a's first miss: 5)
    assert done.returncode == max(EXIT_CODES[a["status"]], EXIT_CODES[b["status"]])
    assert a["status"] in ("found", "client_bound") and 1 <= a["c_max"] <= 3
    assert a["first_miss"] == a["c_max"] + 1
    _alternate_while_both_search(answer["order"])
    delta = answer["deltas"][0]
    assert delta["a"] == "a" and delta["b"] == "b" and delta["low"] > 0
    assert delta["better"] == "b" and answer["winner"] == "b"
    assert answer["verified"] == "every target with a C_max" and a["users_run"]
    assert done.stdout.splitlines()[0].startswith("b has the higher capacity")
    for name in ("a", "b"):  # each target's answer where a single search puts it
        assert json.loads((out / name / "capacity.json").read_text())["deployment"] == name
        assert Path(answer["targets"][0 if name == "a" else 1]["probe_run"]).parent == (
            out / name / "runs")
    # the report of the output opens with the comparison, then each target's answer
    report = subprocess.run([*CLI, "report", str(out), "--out", str(tmp_path / "r")],
                            capture_output=True, text=True, timeout=300)
    assert report.returncode == 0, report.stderr
    summary = (tmp_path / "r" / "report.md").read_text().split("## 1. Executive summary")[1]
    lines = [line for line in summary.splitlines() if line.strip()]
    assert lines[0].startswith("**b has the higher capacity")
    assert lines[1].startswith("**a ") and lines[2].startswith("**b ")


@pytest.mark.slow
def test_an_interrupt_keeps_every_target_s_probes(tmp_path):
    out = tmp_path / "out"
    with (simulator("sglang-spec", 20.0, tmp_path / "a.log") as url_a,
          simulator("sglang-direct", 20.0, tmp_path / "b.log") as url_b):
        proc = subprocess.Popen(
            [*CLI, "capacity", "--target", f"a={url_a}", "--target", f"b={url_b}",
             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None
        for line in proc.stderr:  # b's first probe is done: a's second is under way
            if line.startswith("b c=1: "):
                break
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=120)
    assert proc.returncode == 130
    answer = json.loads((out / "capacity.json").read_text())
    assert answer["complete"] is False
    assert [t["concurrency"] for t in answer["targets"][0]["probes"]][:1] == [1]
    assert [(t["target"], t["concurrency"]) for t in answer["order"]][:2] == [("a", 1),
                                                                              ("b", 1)]
    assert all(not t["complete"] for t in answer["targets"])
