"""The seed profiles' held-out error and P90 capacity, in virtual time (seeded, no clock).

The held-out fits (tools/simlab/holdout_fits/, written by the seed refit command beside
the profiles) were fitted on c = 1, 8 and 64 of each seed deployment only; swept here at all
seven levels, they predict c = 2, 4, 16 and 32, which the fit never saw. The committed
profiles (fitted on all seven) must give the seed's P90 C_max with the demo's 10 rounds.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.seed_data import SEED_CSV

from servecap.api.predict.predict import predict
from servecap.core.config import SLO
from servecap.sim.calibration.holdout import split_levels
from servecap.sim.calibration.measured_levels import read_levels
from servecap.sim.model.sweep import closed_loop_sweep, fit_errors
from servecap.sim.profiles import load_profile, load_profile_file

CONFIGS = ("vllm-direct", "vllm-spec", "sglang-direct", "sglang-spec")
HOLDOUT_FITS = Path(__file__).resolve().parents[1] / "holdout_fits"
SEED_CMAX = {"vllm-direct": 32, "vllm-spec": 32, "sglang-direct": 16, "sglang-spec": 2}
# What the held-out fits reach today (bench/sim_holdout.py prints the table), as a guard
# against getting worse. Issue 20's bar, a mean <= 10% and no cell > 30%, is met by
# sglang-direct (4.6% / 16.5%, since its SGLang scheduling policy), vllm-spec (8.9% / 18.1%,
# since it is fitted over 4 seeded 10-round sweeps instead of one 5-round one, which
# overfitted that one draw) and vllm-direct (8.2% / 26.0%, since its hold grows with the
# requests the scheduler holds up to a fitted knee, counts the batch's decode steps, and
# holds a closed loop's lock-step streams too; 10.6% / 55.0% before the knee) and
# sglang-spec (7.1% / 16.5%, since an eager speculative step costs the same whatever the
# batch, as the seed's flat ITL from c=16 to 32 says; 13.0% / 34.0% when it grew with the
# batch as a captured one does). c = 1, 8 and 64 never run that eager step (above 8
# sequences with speculation on: c=16 and 32), so they leave its cost loose: the held-out fit
# put it at 86 ms, the full fit at 68, and anywhere from 60 to 120 ms meets the bar. Where
# the held-out fit lands rests on its start (seed_bases: from a fit that saw c=16).
HELD_OUT_MEAN = 0.15
HELD_OUT_WORST = 0.35
BAR_MEAN, BAR_WORST = 0.10, 0.30
BAR_GAPS: set[str] = set()


@pytest.fixture(scope="module")
def seed() -> dict[str, list[dict[str, float]]]:
    return read_levels(SEED_CSV)


@pytest.fixture(scope="module")
def held_out(seed: dict[str, list[dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Each held-out fit's errors on the levels it never saw (fit_errors' cells)."""
    out = {}
    for name in CONFIGS:
        held = load_profile_file(HOLDOUT_FITS / f"{name}.toml")
        assert held.calibration["fitted_on"] == "c=1,8,64 only"
        split = split_levels([int(r["concurrency"]) for r in seed[name]])
        assert split == ([1, 8, 64], [2, 4, 16, 32])
        test = [r for r in seed[name] if int(r["concurrency"]) in split[1]]
        out[name] = fit_errors(closed_loop_sweep(held.params, split[1]), test)
    return out


@pytest.mark.parametrize("name", CONFIGS)
def test_held_out_fit_predicts_the_levels_it_never_saw(
    name: str, held_out: dict[str, dict[str, float]]
) -> None:
    errs = held_out[name]
    assert errs["mape"] <= HELD_OUT_MEAN, f"{name}: held-out mean {errs['mape']:.3f}"
    assert errs["max"] <= HELD_OUT_WORST, f"{name}: held-out worst {errs['max']:.3f}"
    # the profile publishes the same held-out error (rounded as written)
    cal = load_profile(name).calibration
    assert float(cal["holdout_mape"]) == pytest.approx(errs["mape"], abs=1e-3)
    assert cal["holdout_split"] == "fit on c=1,8,64; predicted c=2,4,16,32"


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="held-out bar not met yet"))
     if n in BAR_GAPS else n for n in CONFIGS],
)  # fmt: skip
def test_held_out_fit_meets_the_bar(name: str, held_out: dict[str, dict[str, float]]) -> None:
    """Issue 20's bar: fitted on c = 1, 8 and 64, a mean error of at most 10% and no cell
    beyond 30% on the four levels the fit never saw (strict: a gap fails once it closes)."""
    errs = held_out[name]
    assert errs["mape"] <= BAR_MEAN and errs["max"] <= BAR_WORST, (errs["mape"], errs["max"])


@pytest.mark.parametrize("name", CONFIGS)
def test_p90_capacity_matches_the_seed_with_ten_rounds(name: str) -> None:
    pred = predict(load_profile(name), [1, 2, 4, 8, 16, 32, 64], SLO(), rounds=10)
    assert pred.plan.c_max == SEED_CMAX[name], [row["ttft_p90_ms"] for row in pred.levels]


# sglang-spec's P90 at c=4 lies near the SLO (the seed's: 1111 ms, mean 588 ms; about a
# tenth of its requests near 1.1 s from c=4 on). Since its model has a frontend tail (12% of
# requests 375 ms late, fitted) and runs prefill alone, as SGLang does, 8 of these 10 draws
# give the seed's 2 (13 of 20 seeds; one prefill wait behind a late request puts it at
# ~1.1 s); the other draws give 4 (c=4's P90 just under 1 s) or 1 (c=2's over it: the
# model's two streams collide on a prefill more often than the seed's, whose c=2 P90 is
# 496 ms). Before the tail, 1 or 2 of 10. Strict: it fails the day the model gets there.
# Over 100 draws its c=4 P90 has a median of 1046 ms and varies by 15% (c=2's: 808 ms, 15%),
# so a model whose median c=4 P90 were the seed's own 1111 ms would still miss the SLO there
# in about a third of draws; nine in ten would take a median near 1.33 s.
DRAW_GAPS = {"sglang-spec"}
# Where a profile is in DRAW_GAPS, the floor it must not fall under: a refit over 10 seeded
# sweeps met issue 20's held-out bar for sglang-spec but gave its 2 in 4 of these 10 draws.
DRAW_FLOOR = 6


def _draws(name: str) -> list[int | None]:
    """The P90 C_max of 10 seeded 10-round sweeps: the draws the demo's server could make."""
    levels = [1, 2, 4, 8, 16, 32, 64]
    return [predict(load_profile(name), levels, SLO(), rounds=10, seed=1000 * k).plan.c_max
            for k in range(10)]  # fmt: skip


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="P90 at c=4 on the edge"))
     if n in DRAW_GAPS else n for n in CONFIGS],
)  # fmt: skip
def test_p90_capacity_holds_across_random_draws(name: str) -> None:
    """One seed matching is not enough: the demo's server is seeded, but the client's timing
    reorders its draws (a busy machine's more), and a P90 on the edge of the SLO then flips
    C_max a whole level between runs (issue 13; sglang-spec through the real client: the
    seed's 2 in 13 of 13 sweeps on a quiet machine, 10 of 10 beside a busy core, 6 of 10
    beside four other jobs). Nine of ten seeded sweeps at 10 rounds must give the seed's
    C_max."""
    got = _draws(name)
    assert sum(c == SEED_CMAX[name] for c in got) >= 9, got


@pytest.mark.parametrize("name", sorted(DRAW_GAPS))
def test_p90_capacity_of_a_gap_holds_in_most_draws(name: str) -> None:
    """A profile still short of nine in ten must not slip further: the seed's C_max in at
    least DRAW_FLOOR of the 10 draws, and more often than any other C_max."""
    got = _draws(name)
    hits = sum(c == SEED_CMAX[name] for c in got)
    assert hits >= DRAW_FLOOR, got
    assert all(got.count(c) < hits for c in set(got) - {SEED_CMAX[name]}), got
