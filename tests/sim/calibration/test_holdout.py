"""Held-out error: the split, and a calibration that publishes it next to the fit error."""

from __future__ import annotations

import pytest

from servecap.sim.calibration.calibrate import fit
from servecap.sim.calibration.holdout import (
    describe_split,
    error_table,
    holdout,
    leave_one_out,
    per_metric,
    split_levels,
)
from servecap.sim.model.params import ModelParams
from servecap.sim.model.sweep import closed_loop_sweep
from servecap.sim.profiles import Profile


@pytest.mark.parametrize(
    ("levels", "want"),
    [
        ([1, 2, 4, 8, 16, 32, 64], ([1, 8, 64], [2, 4, 16, 32])),
        ([64, 1, 8, 2], ([1, 2, 64], [8])),
        ([1, 4, 16], ([1, 16], [4])),
        ([1, 2], None),
        ([4], None),
    ],
)
def test_split_levels(levels: list[int], want: tuple[list[int], list[int]] | None) -> None:
    assert split_levels(levels) == want


def test_describe_split() -> None:
    assert describe_split([1, 8, 64], [2, 4]) == "fit on c=1,8,64; predicted c=2,4"


def test_error_table_names_each_metric() -> None:
    pred = [{"concurrency": 2.0, "ttft_mean_ms": 110.0, "ttft_p90_ms": 150.0, "itl_mean_ms": 10.0,
             "tps_mean": 90.0, "latency_mean_s": 1.0}]  # fmt: skip
    want = [{"concurrency": 2.0, "ttft_mean_ms": 100.0, "ttft_p90_ms": 200.0, "itl_mean_ms": 10.0,
             "tps_mean": 100.0, "latency_mean_s": 1.0}]  # fmt: skip
    table = error_table("holdout", pred, want)
    assert table["holdout_ttft_mean_ms"] == pytest.approx(0.1)
    assert table["holdout_ttft_p90_ms"] == pytest.approx(0.25)
    assert table["holdout_tps_mean"] == pytest.approx(0.1)
    # the published error is over the four means only (the P90 is reported beside it)
    assert table["holdout_mape"] == pytest.approx(0.05)
    assert table["holdout_max_cell_error"] == pytest.approx(0.1)
    assert per_metric({"c=1 itl_mean_ms": 0.2, "c=2 itl_mean_ms": 0.4}) == {
        "itl_mean_ms": pytest.approx(0.3)
    }


@pytest.mark.slow
def test_calibration_reports_fit_and_held_out_error() -> None:
    truth = ModelParams(step_base_ms=9.0, decode_ms_per_seq=0.6, frontend_ms=20.0)
    rows = closed_loop_sweep(truth, [1, 4, 16], rounds=3)
    base = Profile(name="mine", params=ModelParams(step_base_ms=4.0, decode_ms_per_seq=1.5,
                                                   frontend_ms=20.0))  # fmt: skip
    prof = fit(rows, base, free=["step_base_ms", "decode_ms_per_seq"], max_evals=40)
    cal = prof.calibration
    assert cal["holdout_split"] == "fit on c=1,16; predicted c=4"
    assert cal["fitted"] == "step_base_ms, decode_ms_per_seq"
    for prefix in ("fit", "holdout"):
        for metric in ("ttft_mean_ms", "itl_mean_ms", "tps_mean", "latency_mean_s"):
            assert f"{prefix}_{metric}" in cal
    # the truth is in the model's family: both errors are small, and both are real numbers
    assert 0 <= float(cal["fit_mape"]) < 0.05
    assert 0 <= float(cal["holdout_mape"]) < 0.05
    assert cal["mape"] == cal["fit_mape"]


@pytest.mark.slow
def test_too_few_levels_have_no_held_out_error() -> None:
    rows = closed_loop_sweep(ModelParams(step_base_ms=9.0), [1, 4], rounds=3)
    prof = fit(rows, Profile(name="x", params=ModelParams(step_base_ms=5.0)),
               free=["step_base_ms"], max_evals=20)  # fmt: skip
    assert "holdout_mape" not in prof.calibration and "fit_mape" in prof.calibration


def test_a_split_can_name_its_train_levels() -> None:
    """`train_levels`: fit on the levels a user would measure, predict the rest (the bench's
    `--train 1,8,16,64`); none left to predict is no held-out error."""
    rows = closed_loop_sweep(ModelParams(step_base_ms=9.0), [1, 2, 4, 8], rounds=2)
    seen: list[list[int]] = []

    def fit_fn(train: list[dict[str, float]]) -> ModelParams:
        seen.append([int(row["concurrency"]) for row in train])
        return ModelParams(step_base_ms=9.0)

    held = holdout(rows, fit_fn, train_levels=[1, 4, 8])
    assert held is not None and seen == [[1, 4, 8]]
    assert held.split == "fit on c=1,4,8; predicted c=2"
    assert [int(row["concurrency"]) for row in held.pred] == [2]
    assert holdout(rows, fit_fn, train_levels=[1, 2, 4, 8]) is None
    # a train level that was not measured is not named as fitted on
    unmeasured = holdout(rows, fit_fn, train_levels=[1, 4, 8, 64])
    assert unmeasured is not None and unmeasured.split == "fit on c=1,4,8; predicted c=2"
    assert holdout(rows, fit_fn, train_levels=[64]) is None


def test_leave_one_out_predicts_each_inner_level_from_the_others() -> None:
    """`sim calibrate`'s held-out error: one fit per level between the ends, each without it;
    the ends stay in every fit (predicting beyond the measured range is not interpolation)."""
    rows = closed_loop_sweep(ModelParams(step_base_ms=9.0), [1, 2, 4, 8], rounds=2)
    seen: list[list[int]] = []

    def fit_fn(train: list[dict[str, float]]) -> ModelParams:
        seen.append([int(row["concurrency"]) for row in train])
        return ModelParams(step_base_ms=9.0)

    held = leave_one_out(rows, fit_fn)
    assert held is not None and seen == [[1, 4, 8], [1, 2, 8]]
    assert held.split == "leave one level out: c=2,4, each predicted by a fit on the others"
    assert [int(row["concurrency"]) for row in held.pred] == [2, 4]
    assert [int(row["concurrency"]) for row in held.target] == [2, 4]
    three = closed_loop_sweep(ModelParams(step_base_ms=9.0), [1, 4, 16], rounds=2)
    single = leave_one_out(three, fit_fn)
    assert single is not None and single.split == "fit on c=1,16; predicted c=4"
    assert leave_one_out(rows[:2], fit_fn) is None


@pytest.mark.slow
def test_calibration_reports_leave_one_out_over_the_user_s_levels() -> None:
    truth = ModelParams(step_base_ms=9.0, decode_ms_per_seq=0.6, frontend_ms=20.0)
    rows = closed_loop_sweep(truth, [1, 2, 4, 8], rounds=3)
    base = Profile(name="mine", params=ModelParams(step_base_ms=4.0, decode_ms_per_seq=1.5,
                                                   frontend_ms=20.0))  # fmt: skip
    cal = fit(rows, base, free=["step_base_ms", "decode_ms_per_seq"], max_evals=30).calibration
    assert cal["holdout_split"] == (
        "leave one level out: c=2,4, each predicted by a fit on the others")
    assert 0 <= float(cal["holdout_mape"]) < 0.05  # the truth is in the model's family
