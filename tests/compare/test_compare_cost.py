"""`servecap compare` with GPUs and a price: which deployment is cheaper per served user,
with its interval, from the users' intervals (two simulator servers on 127.0.0.1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servecap.cli.main import app

pytestmark = pytest.mark.slow  # each module's fixture runs a whole run

runner = CliRunner()
SLOW = ["--ttft-slo-ms", "5000", "--tps-slo", "1"]  # both targets hold every level


@pytest.fixture(scope="module")
def priced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("cmpcost")
    result = runner.invoke(app, [
        "compare", "--target", "a=sim:deterministic*2", "--target", "b=sim:deterministic",
        "--repeats", "3", "--concurrency", "1,2", "--rounds", "3", "--output-tokens", "12",
        "--seed", "5", "--out", str(out), "--gpus", "1", "--gpu-hour-cost", "2",
        "--target-gpus", "a=2", *SLOW,
    ])
    assert result.exit_code == 0, result.output
    (path,) = [p for p in out.iterdir() if p.is_dir()]
    return path, result.output


def test_each_target_run_stores_its_cost(priced: tuple[Path, str]) -> None:
    path, _ = priced
    data = json.loads((path / "comparison.json").read_text())
    costs = {t["name"]: json.loads((path / t["run_dir"] / "run.json").read_text())["cost"]
             for t in data["targets"]}
    assert costs == {"a": {"gpus": 2.0, "gpu_hour_cost": 2.0},
                     "b": {"gpus": 1.0, "gpu_hour_cost": 2.0}}


def _expected(path: Path) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """Cost per user-hour (estimate, low, high) of a and b from the stored users' intervals:
    H / U, H / U_high, H / U_low, with H = 4 (a: 2 GPUs) and 2 (b) per hour."""
    head = json.loads((path / "comparison.json").read_text())["headlines"][0]
    out = []
    for side, hourly in (("a", 4.0), ("b", 2.0)):
        cap = head[side]
        out.append((hourly / cap["users"], hourly / cap["users_high"],
                    hourly / cap["users_low"]))
    return out[0], out[1]


def test_compare_prints_the_cost_per_served_user(priced: tuple[Path, str]) -> None:
    path, output = priced
    (a_est, _, _), (b_est, _, _) = _expected(path)
    assert "cost per served user-hour at the SLOs" in output
    assert f"b {b_est:.4g} USD" in output and f"a {a_est:.4g} USD" in output


def test_report_on_the_comparison_carries_the_cost(priced: tuple[Path, str],
                                                    tmp_path: Path) -> None:
    path, _ = priced
    from servecap.api.comparison.report import compared_report, report_runs
    from servecap.api.stored.report import ReportOptions
    from servecap.core.config import SLO

    slo = SLO(ttft_ms=5000, tps=1)
    _, section = compared_report([path], report_runs([path]), ReportOptions(slo=slo))
    assert section is not None
    (pair,) = section.pairs
    assert pair.cost is not None
    a, b = _expected(path)
    got = [(i.estimate, i.low, i.high) for i in pair.cost.per_user_hour]
    assert got[0] == pytest.approx(a) and got[1] == pytest.approx(b)
    diff = pair.cost.difference
    assert (diff.low, diff.high) == pytest.approx((b[1] - a[2], b[2] - a[1]))
    # b runs at twice a's speed on half its GPUs: it serves more users for less
    assert pair.cost.cheaper == "b" and diff.high is not None and diff.high < 0
    assert any("b is cheaper than a" in line.text for line in pair.lines)
    result = runner.invoke(app, ["report", str(path), "--out", str(tmp_path), *SLOW])
    assert result.exit_code == 0, result.output
    assert "b is cheaper than a" in (tmp_path / "comparison.md").read_text().replace("\\", "")


def test_bad_target_gpus_is_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, [
        "compare", "--target", "a=sim:deterministic", "--target", "b=sim:deterministic",
        "--target-gpus", "a=-1", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "--target-gpus" in result.output
    assert not (tmp_path / "out").exists()
