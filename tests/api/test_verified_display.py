"""Predicted beside verified users: `plan` (JSON and table) and the report on a sweep find the
verify run made from it (beside it, verify's default output) under the same SLO, and say which
number is which; under another SLO the sweep's users stay "not verified"."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from servecap.api.stored.plan import plan_runs
from servecap.api.stored.report import ReportOptions, build_report
from servecap.cli.main import app
from servecap.core.config import SLO
from servecap.core.summary import LevelSummary
from servecap.report import views
from servecap.report.uncertainty import verification_table
from servecap.storage.run_dir import write_summaries
from servecap.storage.runs import load_runs
from servecap.storage.verification import (
    LevelCheck,
    Verification,
    verification_for,
    write_verification,
)

THINK = SLO(think_time_s=4.5)  # the verify run's: P90, TTFT 1 s, TPS 15, exp:4.5
PLAN_FLAGS = ["--think-time-s", "4.5"]


def stored(path: Path, levels: list[LevelSummary]) -> Path:
    path.mkdir(parents=True)
    (path / "run.json").write_text(json.dumps({"name": path.name.split("-")[0]}))
    write_summaries(path, levels)
    return path


def sweep_and_verify(root: Path, source: str | None = None) -> tuple[Path, Path]:
    sweep = stored(root / "sweep-20261201T100000Z", [
        LevelSummary(concurrency=c, ttft_p90_ms=ttft, tps_p90=30, latency_mean_s=0.3)
        for c, ttft in ((8, 200), (16, 400), (32, 3000))
    ])  # C_max 16: users 16 x (1 + 4.5 / 0.3) = 256 predicted
    check = LevelCheck(users=256, ttft=2500, tps=20, verdict="fail", mean_concurrency=90,
                       law_concurrency=88, law_error=0.02)
    result = Verification(
        source_run=source or str(sweep), statistic="p90", slo=THINK, think="exp:4.5", c_max=16,
        latency_mean_s=0.3, predicted_users=256, at_predicted=check,
        concurrency_vs_c_max=4.6, verified_users=90, prediction_error=1.84,
        search_status="converged", search_message="boundary found: 90 meets the SLOs",
        levels=[check, check.model_copy(update={"users": 90, "verdict": "pass"})],
    )
    verify = stored(root / "sweep-verify-20261201T101000Z", [
        LevelSummary(level="users=256", ttft_p90_ms=2500, tps_p90=20, latency_mean_s=2.0),
        LevelSummary(level="users=90", ttft_p90_ms=600, tps_p90=25, latency_mean_s=0.5),
    ])
    write_verification(verify, result)
    return sweep, verify


def test_plan_json_on_the_sweep_names_predicted_and_verified(tmp_path):
    sweep, verify = sweep_and_verify(tmp_path)
    result = CliRunner().invoke(app, ["plan", str(sweep), "--format", "json", *PLAN_FLAGS])
    assert result.exit_code == 0, result.output
    (item,) = json.loads(result.output)["runs"]
    assert item["c_max"] == 16 and item["users"] == 256 and item["predicted_users"] == 256
    assert item["verified_users"] == 90
    assert Path(item["verification"]["verify_run"]) == verify.resolve()
    # another think time asks another question: the sweep's users are a prediction only
    other = CliRunner().invoke(app, ["plan", str(sweep), "--format", "json"])
    (item,) = json.loads(other.output)["runs"]
    assert item["predicted_users"] == item["users"] and item["verified_users"] is None
    assert item["verification"] is None


def test_plan_table_says_which_number_is_which(tmp_path):
    sweep, _ = sweep_and_verify(tmp_path)
    table = CliRunner().invoke(app, ["plan", str(sweep), *PLAN_FLAGS])
    assert table.exit_code == 0, table.output
    text = " ".join(table.output.split())
    assert "users 256 predicted, verified 90 (measured)" in text
    assert "it holds 256 predicted users (C_max 16; verified 90 users (measured))" in text
    plain = CliRunner().invoke(app, ["plan", str(sweep)])
    assert "predicted, not verified" in " ".join(plain.output.split())


def test_a_relative_source_path_still_finds_its_sweep(tmp_path):
    sweep, verify = sweep_and_verify(tmp_path, source="results/sweep-20261201T100000Z")
    found = verification_for(sweep, THINK)
    assert found is not None and found[0] == verify.resolve()
    assert verification_for(sweep, SLO()) is None


def test_both_loaded_plans_and_the_report_show_it(tmp_path):
    sweep, verify = sweep_and_verify(tmp_path)
    report = plan_runs(load_runs([sweep, verify]), THINK)
    by_name = {r.name: r for r in report.runs}
    assert by_name["sweep"].verified_users == 90
    assert {r.verified_users for r in report.runs} == {90}  # the verify run shows its own
    model = build_report(load_runs([sweep]), ReportOptions(title="v", slo=THINK))
    table = views.capacity_table(model, "p90")
    assert table.header[3:] == ["users (predicted, Little's law)",
                                "users (verified, servecap verify)"]
    assert table.rows == [["sweep", "16", "0.30", "256", "90 (measured)"]]
    assert views.capacity_table(model, "mean").rows[0][-1] == "not verified"
    verified = verification_table(model)
    assert verified is not None
    (row,) = verified.rows
    assert row[:4] == ["sweep", verify.name, "256 (predicted)", "90 (verified)"]
    assert "verified 90 users (measured)" in model.headline["p90"][0]
