"""Loose parameters: what the measured levels cannot pin down, and the level that would.

sglang-spec's eager speculation (above 8 sequences with speculation on) is met at c = 16 and
32 only; levels c = 1, 8 and 64 leave its cost loose. Seeded sweeps in
virtual time: no clock.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servecap.api.predict.predict import error_label, predict
from servecap.core.config import SLO
from servecap.report.simulated import simulated_label
from servecap.sim.calibration import calibrate
from servecap.sim.calibration.identify import between_levels, levels_to_measure, loose_parameters
from servecap.sim.calibration.measured_levels import read_levels
from servecap.sim.cli import sim_app
from servecap.sim.profiles import load_profile, load_profile_file
from tests.seed_data import SEED_CSV

EAGER = ["spec_eager_step_ms"]


@pytest.fixture(scope="module")
def seed_rows() -> list[dict[str, float]]:
    return read_levels(SEED_CSV)["sglang-spec"]


def _at(rows: list[dict[str, float]], levels: set[int]) -> list[dict[str, float]]:
    return [r for r in rows if int(r["concurrency"]) in levels]


def test_between_levels_is_the_doubling_grid_inside_the_measured_range() -> None:
    assert between_levels([1, 8, 64]) == [2, 4, 16, 32]
    assert between_levels([1, 2, 4, 8, 16, 32, 64]) == []
    assert between_levels([2, 12]) == [4, 8]
    assert between_levels([4]) == []


@pytest.mark.slow
def test_levels_that_never_enter_a_regime_leave_its_parameters_loose(
    seed_rows: list[dict[str, float]],
) -> None:
    params = load_profile("sglang-spec").params
    loose = loose_parameters(params, [*EAGER, "step_base_ms"], _at(seed_rows, {1, 8, 64}))
    assert sorted(item.name for item in loose) == sorted(EAGER)  # the step's base is pinned
    assert levels_to_measure(loose) == ["c=16"]
    for item in loose:
        assert item.move >= 0.10 and item.move >= 5 * item.measured_move
        assert item.text().startswith(f"{item.name} (moves c=16 tps_mean by ")


def test_measuring_the_level_it_names_pins_them_down(seed_rows: list[dict[str, float]]) -> None:
    params = load_profile("sglang-spec").params
    assert loose_parameters(params, EAGER, _at(seed_rows, {1, 8, 16, 64})) == []


@pytest.mark.slow
def test_a_fit_on_such_levels_says_so_in_its_profile_and_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed_rows: list[dict[str, float]]
) -> None:
    real_fit = calibrate.fit

    def quick_fit(*args: object, **kwargs: object) -> object:
        quick = {"free": ["spec_eager_step_ms"], "max_evals": 4, "with_holdout": False}
        return real_fit(*args, **{**kwargs, **quick})  # type: ignore[arg-type]

    monkeypatch.setattr(calibrate, "fit", quick_fit)
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps(_at(seed_rows, {1, 8, 64})))
    out = tmp_path / "spec.toml"
    args = ["calibrate", str(summary), "--out", str(out), "--base", "sglang-spec"]
    res = CliRunner().invoke(sim_app, args)
    assert res.exit_code == 0, res.output
    assert "leave these fitted parameters loose: spec_eager_step_ms (moves c=16" in res.output
    assert "measure c=16 to pin them down" in res.output
    profile = load_profile_file(out)
    assert profile.calibration["measure_next"] == "c=16"
    assert str(profile.calibration["loose"]).startswith("spec_eager_step_ms (moves c=16")
    # what reads the profile says it: sim predict, the predicted-beside table, the report
    pred = predict(profile, [1, 2], SLO(), rounds=2, draws=1)
    assert pred.measure_next == "c=16" and pred.loose == profile.calibration["loose"]
    assert error_label(0.07, 0.2, pred.measure_next).endswith(
        "; parameters loose at c=16, which it was not fitted on: measure there")
    version = {"server": "servecap-sim", "profile": "spec",
               "calibration": {**profile.calibration, "holdout_mape": 0.13}}
    assert "; fitted parameters loose at c=16, which it was not fitted on (spec_eager_step_ms" \
        in simulated_label({"version": version})


def test_the_seed_profiles_fitted_on_every_level_have_none_loose() -> None:
    for name in ("vllm-direct", "vllm-spec", "sglang-direct", "sglang-spec"):
        assert "measure_next" not in load_profile(name).calibration
    assert error_label(0.07, 0.2) == "held-out error 7.0% (worst cell 20%)"
