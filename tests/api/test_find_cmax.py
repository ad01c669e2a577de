"""`servecap run --find-cmax`: the bisection plan over fake levels (which levels it adds, in
what order, and the C_max they give), bad flags exit 2 before any load, and on a simulator
profile the refined C_max lies between grid levels with the added levels in the run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servecap.api.run.find_cmax import CmaxPlan, grid_bracket, refined_levels, refinement_line
from servecap.api.run.run import run_benchmark
from servecap.api.run.run_config import RunConfig
from servecap.api.stored.plan import plan_capacity
from servecap.cli.main import app
from servecap.core.config import SLO, ClientOptions, FindCmax
from servecap.core.summary import LevelSummary
from servecap.kinds.registry import kind_of
from servecap.stats.capacity import plan_levels
from servecap.storage.runs import load_run
from tests.api.test_verify import next_step, simulator

SLO_P90 = FindCmax(slo=SLO(ttft_ms=100, tps=10, statistic="p90"), budget=8)


def level(c: int, ok: bool) -> LevelSummary:
    return LevelSummary(concurrency=c, ttft_p90_ms=50 if ok else 500, tps_p90=20,
                        latency_mean_s=1.0, n_ok=10 * c)


def drive(config: RunConfig, passes: Callable[[int], bool]) -> tuple[list[int], CmaxPlan]:
    """Run the plan as the sweep does: each level is summarised before the next is asked."""
    plan = CmaxPlan.for_config(config)
    measured, summaries = [], []
    steps = plan.steps()
    summary = None
    while (step := next_step(steps, summary)) is not None:
        spec = step.level
        measured.append(spec.concurrency)
        assert spec.n_requests == spec.concurrency * config.rounds
        summary = level(spec.concurrency, passes(spec.concurrency))
        summaries.append(summary)
    plan.summaries = summaries  # what the engine measured, for the assertions
    return measured, plan


def test_bisects_between_the_last_passing_and_first_failing_level():
    config = RunConfig(concurrency=[1, 2, 4, 8, 16, 32, 64], rounds=3, find_cmax=SLO_P90)
    measured, plan = drive(config, lambda c: c <= 45)
    assert measured == [1, 2, 4, 8, 16, 32, 64, 48, 40, 44, 46, 45]
    result = plan.result()
    assert result is not None and result.status.value == "converged"
    levels = plan.summaries
    assert plan_levels(levels, SLO_P90.slo, kind_of).c_max == 45
    assert refined_levels(config, levels) == [48, 40, 44, 46, 45]
    line = refinement_line(config, levels)
    assert line is not None and "C_max 45" in line and "first miss c=46" in line


def test_the_budget_caps_the_added_levels_and_c_max_stays_a_measured_pass():
    config = RunConfig(concurrency=[16, 32, 64], rounds=1,
                       find_cmax=SLO_P90.model_copy(update={"budget": 2}))
    measured, plan = drive(config, lambda c: c <= 45)
    assert measured == [16, 32, 64, 48, 40]
    assert plan_levels(plan.summaries, SLO_P90.slo, kind_of).c_max == 40
    assert plan.result().status.value == "budget_spent"


@pytest.mark.parametrize(
    ("passes", "grid_bracket_found", "added"),
    [
        (lambda c: True, None, []),  # every level passed: C_max is a lower bound
        (lambda c: c <= 4, (4, 8), [6, 5]),  # 4 passes, 8 fails: 6 fails, 5 fails
        (lambda c: False, (0, 4), [2, 1]),  # even the first level failed: below it
    ],
)
def test_brackets_from_the_grid(passes, grid_bracket_found, added):
    config = RunConfig(concurrency=[4, 8, 16], rounds=1, find_cmax=SLO_P90)
    measured, plan = drive(config, passes)
    assert grid_bracket(plan.summaries[:3], SLO_P90) == grid_bracket_found
    assert measured[3:] == added


def test_a_stopped_level_stops_the_search():
    config = RunConfig(concurrency=[4, 8], rounds=1, find_cmax=SLO_P90)
    plan = CmaxPlan.for_config(config)
    steps = plan.steps()
    assert next(steps).level.concurrency == 4
    assert next_step(steps, None) is None  # the level recorded nothing: no summary came


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--find-cmax", "--users", "10"], "drop --users"),
        (["--find-cmax", "--rate", "2"], "drop --rate"),
        (["--budget", "3"], "needs --find-cmax"),
        (["--find-cmax", "--budget", "0"], "--budget"),
        (["--find-cmax", "--ttft-slo-ms", "-5"], "--ttft-slo-ms"),
    ],
)
def test_bad_find_cmax_flags_exit_2_before_any_load(args, message):
    # port 9 (discard) on loopback: nothing listens, so any load attempt would say so
    result = CliRunner().invoke(app, ["run", "--base-url", "http://127.0.0.1:9/v1", *args])
    assert result.exit_code == 2 and message in result.output, result.output
    assert "cannot reach" not in result.output and "refused" not in result.output


@pytest.mark.slow
def test_find_cmax_on_the_simulator_lands_between_grid_levels(tmp_path: Path):
    # vllm-spec at x4 (slow enough that the server, not client lag, sets TTFT): mean TTFT
    # grows steadily with concurrency (the seed's 263 ms at c=8, 565 at 32, 1031 at 64).
    # How fast depends on how loaded the machine is, so the objective is set from a first
    # grid run on this machine: halfway between the mean TTFT at c=8 and at c=64 puts the
    # boundary well inside the bracket. Not vllm-direct: its c=8 TTFT swings between runs
    # (its eight streams fall into lock-step cohorts that skip its hold, or do not), so a
    # first run's c=8 could put the objective under the second run's c=15 (CI, 2026-12-06).
    with simulator("vllm-spec", 4.0, tmp_path / "sim.log") as base_url:
        first = run_benchmark(RunConfig(
            name="grid", concurrency=[8, 64], rounds=4, warmup=1, server_metrics="off",
            out_dir=str(tmp_path / "grid"), client=ClientOptions(base_url=base_url),
        ))
        low, high = (lv.ttft_mean_ms for lv in first.levels)
        assert low is not None and high is not None and high > 2 * low, (low, high)
        slo_ms = (low + high) / 2
        result = CliRunner().invoke(app, [
            "run", "--base-url", base_url, "--concurrency", "8,64", "--rounds", "4",
            "--warmup", "1", "--name", "cm", "--out", str(tmp_path), "--server-metrics", "off",
            "--find-cmax", "--budget", "3", "--stat", "mean", "--ttft-slo-ms", f"{slo_ms:.1f}",
            "--tps-slo", "1",
        ])
    assert result.exit_code == 0, result.output
    assert "--find-cmax: added c=36" in result.output
    (run_dir,) = tmp_path.glob("cm-*")
    run = load_run(run_dir)
    keys = sorted(int(lv.key.value) for lv in run.levels)
    added = [c for c in keys if c not in (8, 64)]
    assert 1 <= len(added) <= 3 and all(8 < c < 64 for c in added)
    info = json.loads((run_dir / "run.json").read_text())
    assert info["config"]["find_cmax"]["budget"] == 3
    assert set(info["client_health"]) == {str(c) for c in keys}
    plan = plan_capacity([run_dir], SLO(ttft_ms=round(slo_ms, 1), tps=1, statistic="mean"))
    (capacity,) = plan.runs
    assert capacity.c_max is not None and 8 < capacity.c_max < 64, (capacity.c_max, keys)
    assert capacity.c_max in added


def test_the_config_refuses_find_cmax_on_another_load_kind():
    from pydantic import ValidationError

    from servecap.kinds.closed import ClosedLoad
    from servecap.kinds.sessions import SessionsLoad

    with pytest.raises(ValidationError, match="refines a concurrency grid"):
        RunConfig(find_cmax=SLO_P90, load=SessionsLoad(users=[3]))
    config = RunConfig(find_cmax=SLO_P90, rounds=2, load=ClosedLoad(concurrency=[2, 8], rounds=2))
    measured, _ = drive(config, lambda c: c <= 5)
    assert measured == [2, 8, 5, 6]
