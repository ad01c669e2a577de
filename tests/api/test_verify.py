"""`servecap verify`: bad input exits 2 before any load; on the simulator a sweep then
`verify --search` reports predicted and verified users, every level it measured is a level of
the verify run, and its mean concurrency agrees with N * R / (R + Z) within 5%."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servecap.api.predict.verify import VerifyOptions, verify
from servecap.api.run.run import Secrets, run_benchmark
from servecap.api.run.run_config import RunConfig
from servecap.cli.main import app
from servecap.core.config import ClientOptions
from servecap.core.errors import UserInputError
from servecap.core.summary import LevelSummary
from servecap.storage.run_dir import write_summaries
from servecap.storage.runs import load_run
from servecap.storage.verification import load_verification


def stored_run(root, levels, config=None):
    run = root / "r"
    run.mkdir()
    info = {"name": "r", "config": config or {"client": {"base_url": "http://127.0.0.1:9/v1"}}}
    (run / "run.json").write_text(json.dumps(info))
    write_summaries(run, levels)
    return run


@pytest.mark.parametrize(
    ("levels", "message"),
    [
        ([LevelSummary(level="users=5", ttft_p90_ms=1, tps_p90=99, latency_mean_s=1)],
         "needs a concurrency sweep"),
        ([LevelSummary(concurrency=4, ttft_p90_ms=5000, tps_p90=99, latency_mean_s=1)],
         "no level meets the SLOs"),
    ],
)
def test_verify_refuses_before_any_load(tmp_path, levels, message):
    run = stored_run(tmp_path, levels)
    result = CliRunner().invoke(app, ["verify", str(run)])
    assert result.exit_code == 2 and message in result.output, result.output
    assert "cannot reach" not in result.output


def test_bad_think_time_and_tolerance_exit_2(tmp_path):
    run = stored_run(tmp_path, [LevelSummary(concurrency=4, ttft_p90_ms=5, tps_p90=99,
                                             latency_mean_s=1)])
    bad = CliRunner().invoke(app, ["verify", str(run), "--think-time", "exp:x"])
    assert bad.exit_code == 2 and "--think-time" in bad.output
    bad = CliRunner().invoke(app, ["verify", str(run), "--tolerance", "2"])
    assert bad.exit_code == 2 and "--tolerance" in bad.output
    bad = CliRunner().invoke(app, ["verify", str(run), "--search", "--search-on-miss"])
    assert bad.exit_code == 2 and "not both" in bad.output
    with pytest.raises(UserInputError, match="turns '0'"):
        verify(run, VerifyOptions(turns="0"))


@contextmanager
def simulator(profile: str, time_scale: float, log: Path, extra: list[str] | None = None):
    """The simulator in its own process (in a thread it would share the client's GIL and
    make the client lag), on 127.0.0.1 with a free port; yields its base URL. Its output
    goes to a file: a pipe nobody reads would fill and stall it."""
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "servecap.sim", "serve", "--profile", profile, "--port",
             "0", "--time-scale", str(time_scale), *(extra or [])], stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        for _ in range(200):  # 20 s at most
            found = [ln for ln in log.read_text().splitlines() if "listening on " in ln]
            if found:
                break
            time.sleep(0.1)  # poll
        else:
            raise RuntimeError("the simulator did not start")
        yield found[0].split("listening on ")[1].strip()
    finally:
        proc.terminate()
        proc.wait(20)


@pytest.mark.slow
def test_sweep_then_verify_search_on_the_simulator(tmp_path):
    with simulator("vllm-direct", 10.0, tmp_path / "sim.log") as base_url:
        sweep = run_benchmark(RunConfig(
            name="sweep", concurrency=[4, 8, 16, 32], rounds=4, warmup=0, input_tokens=64,
            output_tokens=64, out_dir=str(tmp_path), client=ClientOptions(base_url=base_url),
        ), Secrets())
        # The ramp defaults to one mean think time, so users do not all start in a burst.
        options = VerifyOptions(ttft_slo_ms=300, tps_slo=250, think="exp:3", turns="2",
                                duration_s=12, search=True, tolerance=0.25, budget=3,
                                out_dir=str(tmp_path / "verify"))
        result, outcome = verify(sweep.run_dir, options)
    assert result.predicted_users > 0
    assert result.search_status is not None and result.levels
    users = [check.users for check in result.levels]
    assert users[0] == result.predicted_users and len(users) <= 3
    # the verified users are the most the search saw pass, and some did
    passed = [check.users for check in result.levels if check.verdict == "pass"]
    assert passed, [(check.users, check.verdict) for check in result.levels]
    assert result.verified_users == max(passed)
    stored = load_run(outcome.run_dir)
    assert sorted(int(lv.key.value) for lv in stored.levels) == sorted(set(users))
    assert load_verification(outcome.run_dir) == result
    for level in stored.levels:
        assert level.law_error is not None and abs(level.law_error) < 0.05, level
    planned = CliRunner().invoke(app, ["plan", str(outcome.run_dir), "--format", "json"])
    (item,) = json.loads(planned.output)["runs"]
    assert item["predicted_users"] == result.predicted_users
    assert item["verified_users"] == result.verified_users


def _verification(verdict, verified=None, search_status=None):
    from servecap.core.config import SLO
    from servecap.storage.verification import LevelCheck, Verification

    at = LevelCheck(users=434, ttft=1079.4, tps=24.8, verdict=verdict, mean_concurrency=29.1,
                    law_concurrency=31.7, law_error=-0.08)
    return Verification(source_run="runs/sweep", statistic="p90", slo=SLO(), think="exp:45",
                        c_max=32, latency_mean_s=3.58, predicted_users=434, at_predicted=at,
                        concurrency_vs_c_max=-0.09, verified_users=verified,
                        prediction_error=0.0 if verified else None, search_status=search_status)


@pytest.mark.parametrize(
    ("verification", "expected"),
    [
        (_verification("pass", verified=434), "verified users: 434 (prediction error +0.0%)"),
        (_verification("undecided"), "a confidence interval spans an SLO threshold"),
        (_verification("fail"), "(it missed the SLOs)"),
        (_verification("fail", search_status="nothing_passes"), "no N the search measured"),
    ],
)
def test_summary_line_says_why_the_prediction_was_not_verified(verification, expected):
    from servecap.api.predict.verify import summary_line

    last = summary_line(verification).splitlines()[-1]
    assert expected in last
    if verification.verified_users is None and verification.search_status is None:
        assert "`servecap verify runs/sweep --search`" in last  # the next step, runnable


def _drive(plan, ttft_p90_at):
    """Run a users plan's levels as if measured: each level's P90 TTFT from ``ttft_p90_at``."""
    measured = []
    steps = plan.steps()
    summary = None
    while (step := next_step(steps, summary)) is not None:
        users = int(step.level.key.value)
        measured.append(users)
        summary = LevelSummary(
            level=f"users={users}", ttft_p90_ms=ttft_p90_at(users), tps_p90=99.0,
            latency_mean_s=1.0, n_ok=500, n_requests=500)
    return measured


def next_step(steps, summary):
    """What the engine does: hand the plan the last summary, take its next step."""
    try:
        return steps.send(summary)
    except StopIteration:
        return None


@pytest.mark.parametrize(("boundary", "expected"), [(500, [456]), (400, [456, 364, 410, 387])])
def test_search_on_miss_measures_one_level_when_the_prediction_holds(boundary, expected):
    """The demo's search: none when the predicted N passes; below it when it misses (steps
    of 1/1.25, then bisection to within 10%, at most 4 levels)."""
    from servecap.api.predict.verify import UsersPlan
    from servecap.kinds.sessions import SessionsLoad
    from servecap.stats.search import users_search

    options = VerifyOptions(search_on_miss=True, factor=1.25, tolerance=0.1, budget=4)
    search = users_search(456, tolerance=0.1, budget=4, factor=1.25, maximum=456 * 4)
    plan = UsersPlan(SessionsLoad(users=[456], think="exp:45", turns="1", duration_s=5),
                     456, options, search)
    measured = _drive(plan, lambda users: 500.0 if users <= boundary else 1500.0)
    assert measured == expected
    assert bool(search.result().probes) == (boundary < 456)
    if boundary < 456:
        assert search.result().found == 387
