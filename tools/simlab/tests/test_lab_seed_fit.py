"""The seed lab: how close the seed profiles' pure sweep comes to the seed report's Appendix A."""

from __future__ import annotations

import pytest
from tests.seed_data import SEED_CSV

from servecap.sim.calibration.measured_levels import read_levels
from servecap.sim.model.sweep import closed_loop_sweep, fit_errors
from servecap.sim.profiles import load_profile

CONFIGS = ("vllm-direct", "vllm-spec", "sglang-direct", "sglang-spec")



@pytest.fixture(scope="module")
def sweeps() -> dict[str, list[dict[str, float]]]:
    return {name: closed_loop_sweep(load_profile(name).params) for name in CONFIGS}


@pytest.fixture(scope="module")
def seed() -> dict[str, list[dict[str, float]]]:
    return read_levels(SEED_CSV)


@pytest.mark.parametrize("name", CONFIGS)
def test_profile_matches_appendix_a(
    name: str, sweeps: dict[str, list[dict[str, float]]], seed: dict[str, list[dict[str, float]]]
) -> None:
    errs = fit_errors(sweeps[name], seed[name])
    assert len(errs) - 2 == 28  # 7 levels x 4 metrics
    assert errs["mape"] <= 0.12, f"{name}: MAPE {errs['mape']:.3f}"


# A known gap is kept visible here (strict: it fails the day the fit gets there); none is
# left. sglang-direct's worst cell, its c=64 TTFT mean, was 36% (1291 ms against 948) until
# its refit asked its P90s for half the side penalty's margin (``--slo-margin 0.025``; see
# ``fitting.side_penalty``): its model has no TTFT spread (its lock-step streams are
# prefilled in the same pairs of batches every round), so to put c=32's P90 over the SLO,
# as the seed's 1204 ms is, the fit lifts the means at c >= 32, and a 50 ms margin past the
# SLO lifted them further (32% now). vllm-direct's worst cell, its c=8 TTFT mean, was 45%
# under the seed's 388 ms until its hold grew with the batch up to a knee (21% on this
# sweep; over other seeded sweeps it varies from 21% to 54%: at c=8 the closed loop's
# streams fall into lock-step cohorts, which an idle engine admits without a hold, or do not).
WORST_CELL_GAPS: set[str] = set()


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="see above"))
     if n in WORST_CELL_GAPS else n for n in CONFIGS],
)  # fmt: skip
def test_profile_worst_cell_within_35_percent(
    name: str, sweeps: dict[str, list[dict[str, float]]], seed: dict[str, list[dict[str, float]]]
) -> None:
    errs = fit_errors(sweeps[name], seed[name])
    assert errs["max"] <= 0.35, f"{name}: worst cell {errs['max']:.3f}"
