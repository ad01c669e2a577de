"""`servecap compare` runs any load `run` accepts: rate levels and users levels on two
simulator targets, through the run's own kinds, sources and summaries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servecap.cli.main import app

runner = CliRunner()
pytestmark = pytest.mark.timeout(240)
TARGETS = ["--target", "slow=sim:deterministic*2", "--target", "fast=sim:deterministic"]


def _compare(out: Path, *load: str) -> dict:
    result = runner.invoke(app, ["compare", *TARGETS, "--repeats", "2", "--output-tokens", "8",
                                 "--seed", "3", "--out", str(out), *load])
    assert result.exit_code == 0, result.output
    (path,) = [p for p in out.iterdir() if p.is_dir()]
    data = json.loads((path / "comparison.json").read_text())
    data["path"] = path
    return data


@pytest.mark.slow
def test_rate_levels_on_two_targets(tmp_path: Path) -> None:
    data = _compare(tmp_path / "out", "--rate", "2,4", "--duration", "2", "--warmup-s", "0.2",
                    "--cooldown-s", "0.2")
    assert {s["level"] for s in data["slots"]} == {"rate=2/s", "rate=4/s"}
    assert len(data["slots"]) == 2 * 2 * 2 and data["status"] == "complete"
    for target in data["targets"]:
        levels = json.loads((data["path"] / target["run_dir"] / "summary.json").read_text())
        # the open loop's own window and schedule columns, as `run` gives them
        assert all(lv["offered_rps"] in (2, 4) and lv["n_left_out"] >= 0 for lv in levels)
        assert all(lv["ttft_sched_p90_ms"] is not None for lv in levels)
    (pair,) = data["pairs"]
    assert all(lv["metrics"]["tps_mean"]["better"] == "fast" for lv in pair["levels"])


@pytest.mark.slow
def test_users_levels_on_two_targets(tmp_path: Path) -> None:
    data = _compare(tmp_path / "out", "--users", "2,4", "--duration", "2",
                    "--think-time", "fixed:0.1", "--turns", "2")
    assert {s["level"] for s in data["slots"]} == {"users=2", "users=4"}
    for target in data["targets"]:
        levels = json.loads((data["path"] / target["run_dir"] / "summary.json").read_text())
        assert [lv["users"] for lv in levels] == [2, 4]  # the sessions kind's own columns
        assert all(lv["n_ok"] > 0 for lv in levels)


@pytest.mark.slow
def test_a_load_from_its_text_form_and_a_bad_one(tmp_path: Path) -> None:
    data = _compare(tmp_path / "ok", "--load", "shape=steps:4,8:1s")
    assert {s["level"] for s in data["slots"]} == {"shape=1"}
    bad = runner.invoke(app, ["compare", *TARGETS, "--out", str(tmp_path / "bad"),
                              "--rate", "1", "--users", "2"])
    assert bad.exit_code == 2 and "--rate and --users" in bad.output
    assert not (tmp_path / "bad").exists()
