"""`servecap sim predict`: a profile's answer for a workload, in virtual time, labelled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servecap.api.predict.predict import error_label, predict
from servecap.cli.main import app
from servecap.core.config import SLO
from servecap.sim import ModelParams, Profile, load_profile, profile_to_toml

runner = CliRunner()


def _profile(slots: int = 256) -> Profile:
    # 10 ms a step whatever the batch, no frontend: TTFT is one step, ITL 10 ms, until the
    # slots run out and requests queue for one
    params = ModelParams(step_base_ms=10.0, idle_window_ms=0.0, max_num_seqs=slots)
    calibration: dict[str, str | float] = {
        "holdout_mape": 0.08, "holdout_max_cell_error": 0.2,
        "holdout_split": "fit on c=1,8,64; predicted c=2,4,16,32",
    }  # fmt: skip
    return Profile(name="flat", params=params, calibration=calibration)


def test_predict_judges_levels_like_plan() -> None:
    # 4 slots: c=8 queues half its requests for a whole request (64 steps, 640 ms) and c=16
    # three quarters of them, two or three requests' time: P90 TTFT > 1 s there
    pred = predict(_profile(slots=4), [1, 4, 8, 16], SLO(), 128, 64, rounds=5)
    ttft = {row["concurrency"]: row["ttft_p90_ms"] for row in pred.levels}
    # alone, a request's prefill is one step; with 4 streams it may wait for a running step
    assert ttft[1] == pytest.approx(10.0, abs=1.0) and ttft[4] <= 20.5
    assert ttft[8] > 600 and ttft[16] > 1000
    assert pred.plan.c_max == 8
    itl = pred.levels[0]["itl_mean_ms"]
    assert itl == pytest.approx(10.0, rel=0.01)
    # users by Little's law at C_max: 8 x (1 + 45 / L)
    lat = pred.plan.latency_mean_s
    assert lat is not None and pred.plan.users == round(8 * (1 + 45.0 / lat))
    assert pred.holdout_mape == 0.08 and pred.label.startswith("simulated")


def test_longer_prompts_cost_more_prefill() -> None:
    params = ModelParams(step_base_ms=10.0, prefill_ms_per_token=0.1)
    prof = _profile().model_copy(update={"params": params})
    short, long = (predict(prof, [1], SLO(), n, 16, rounds=3).levels[0]["ttft_mean_ms"]
                   for n in (128, 1024))  # fmt: skip
    assert long - short == pytest.approx(0.1 * (1024 - 128), rel=0.02)


def test_error_label() -> None:
    assert error_label(0.071, 0.24) == "held-out error 7.1% (worst cell 24%)"
    assert "no held-out error" in error_label(None, None)


@pytest.mark.slow
def test_cli_prints_a_labelled_prediction(tmp_path: Path) -> None:
    path = tmp_path / "flat.toml"
    path.write_text(profile_to_toml(_profile(slots=4)))
    res = runner.invoke(app, ["sim", "predict", str(path), "--concurrency", "1,8,16",
                              "--output-tokens", "64", "--rounds", "5"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "simulated (prediction, not a measurement)" in res.output
    assert "held-out error 8.0% (worst cell 20%)" in res.output
    assert "Predicted C_max 8" in res.output
    res = runner.invoke(app, ["sim", "predict", str(path), "--concurrency", "1,2",
                              "--format", "json"])  # fmt: skip
    data = json.loads(res.stdout)
    assert data["plan"]["c_max"] == 2 and data["holdout_mape"] == 0.08


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["nope-profile"], "unknown profile"),
        (["vllm-direct", "--input-tokens", "0"], "--input-tokens"),
        (["vllm-direct", "--concurrency", "1,,2"], "--concurrency"),
        (["vllm-direct", "--format", "xml"], "--format"),
        (["deterministic"], "fixed schedule"),
        (["vllm-direct", "--draws", "0"], "--draws"),
    ],
)
def test_cli_bad_input_exits_2(args: list[str], needle: str) -> None:
    res = runner.invoke(app, ["sim", "predict", *args])
    assert res.exit_code == 2, res.output
    assert needle in res.stderr


def test_a_prediction_says_when_its_lengths_were_never_calibrated(tmp_path: Path) -> None:
    """The held-out error is of other concurrencies at the calibrated lengths; a prediction
    at another prompt length says so, in the JSON and on the terminal."""
    prof = _profile()
    prof.calibration["sweep"] = ("closed loop, 10 rounds, 128 input / 128 output tokens and "
                                 "512 input / 32 output tokens")  # fmt: skip
    seen = predict(prof, [1], SLO(), 512, 32, rounds=3)
    assert seen.calibrated_on == ["128/128", "512/32"] and seen.workload_note() is None
    # a few tokens either way (a chat template, another tokenizer's count) is the same length
    assert not predict(prof, [1], SLO(), 139, 128, rounds=3).other_workload
    assert predict(prof, [1], SLO(), 160, 128, rounds=3).other_workload
    other = predict(prof, [1], SLO(), 1024, 16, rounds=3)
    assert other.other_workload and "1024/16 is a length the fit never saw" in str(
        other.workload_note()
    )
    assert json.loads(other.model_dump_json())["other_workload"] is True
    path = tmp_path / "flat.toml"
    path.write_text(profile_to_toml(prof))
    res = runner.invoke(app, ["sim", "predict", str(path), "--concurrency", "1",
                              "--input-tokens", "1024", "--output-tokens", "16"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "note: calibrated on 128/128, 512/32 only" in res.output
    # a profile that does not say what it saw (hand-made) gets no note either way
    assert predict(_profile(), [1], SLO(), 1024, 16, rounds=3).workload_note() is None


def test_a_prediction_says_when_its_fit_guarded_another_ttft_objective(tmp_path: Path) -> None:
    """A fit keeps each P90 TTFT on its measured side of one objective (`sim calibrate
    --ttft-slo-ms`); C_max asked at another says so. A profile from before the objective was
    written down was fitted at 1 s; a hand-made one guarded none."""
    prof = _profile()
    assert predict(prof, [1], SLO(ttft_ms=2000.0), rounds=3).slo_note() is None  # no fit
    prof.calibration.update({"mape": 0.05, "slo_ttft_ms": 2000.0})
    assert predict(prof, [1], SLO(ttft_ms=2000.0), rounds=3).slo_note() is None
    note = predict(prof, [1], SLO(), rounds=3).slo_note()
    assert note is not None and "side of 2000 ms, not of 1000 ms" in note
    assert "--ttft-slo-ms 1000" in note
    del prof.calibration["slo_ttft_ms"]
    assert predict(prof, [1], SLO(), rounds=3).slo_note() is None
    assert "side of 1000 ms" in str(predict(prof, [1], SLO(ttft_ms=500.0), rounds=3).slo_note())
    path = tmp_path / "flat.toml"
    path.write_text(profile_to_toml(prof))
    res = runner.invoke(app, ["sim", "predict", str(path), "--concurrency", "1",
                              "--ttft-slo-ms", "500"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "note: the fit kept each P90 TTFT on its measured side of 1000 ms" in res.output


def test_draws_say_whether_c_max_holds_from_draw_to_draw() -> None:
    """Seeded sweeps of one profile: where a level's P90 lies near the SLO, C_max changes
    between draws and the prediction says so; where none does, every draw agrees."""
    prof = load_profile("sglang-spec")
    loose = predict(prof, [1, 4], SLO(ttft_ms=10_000.0), rounds=10, draws=6)
    assert loose.c_max_draws == [4] * 6
    # every level passed in every draw: C_max is a lower bound, each time
    assert "C_max >= 4 in all 6 draws" in str(loose.draws_line())
    # a threshold between the draws' c=4 P90s (sglang-spec's lies near the 1 s SLO): some
    # draws pass c=4, some miss it, whatever the model's numbers are
    p90s = [next(row["ttft_p90_ms"] for row in drawn if row["concurrency"] == 4)
            for drawn in loose.draw_levels]  # fmt: skip
    assert max(p90s) > min(p90s), p90s
    edge = SLO(ttft_ms=(min(p90s) + max(p90s)) / 2)
    pred = predict(prof, [1, 4], edge, rounds=10, draws=6)
    assert set(pred.c_max_draws) == {1, 4} and pred.c_max_draws[0] == pred.plan.c_max
    line = str(pred.draws_line())
    assert "of 6 draws" in line and "decides C_max by chance" in line, line
    # and it names the level that does, with how often it met the SLOs
    (level, passed), = pred.chance_levels
    assert level == 4 and 0 < passed < 6 and pred.c_max_draws.count(4) == passed
    assert f"(c=4 meets the SLOs in {passed} of 6 draws): measure it with more rounds" in line
    assert predict(prof, [1, 4], edge, rounds=10).draws_line() is None  # one draw: no line


@pytest.mark.slow
def test_cli_prints_the_draws_and_json_carries_them(tmp_path: Path) -> None:
    path = tmp_path / "flat.toml"
    path.write_text(profile_to_toml(_profile(slots=4)))
    res = runner.invoke(app, ["sim", "predict", str(path), "--concurrency", "1,8,16",
                              "--output-tokens", "64", "--rounds", "5",
                              "--draws", "3"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "Across 3 seeded draws of the model: C_max 8 in all 3 draws" in res.output
    res = runner.invoke(app, ["sim", "predict", str(path), "--concurrency", "1,2",
                              "--format", "json", "--draws", "4"])  # fmt: skip
    data = json.loads(res.stdout)
    assert data["c_max_draws"] == [2] * 4 and len(data["users_draws"]) == 4
    assert "draw_levels" not in data
