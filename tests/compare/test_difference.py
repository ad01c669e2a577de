"""The difference statistics on synthetic samples: coverage of a known shift, verdicts, CV."""

from __future__ import annotations

import numpy as np
import pytest

from servecap.stats.difference import Better, Bounds, compare_samples, verdict


def _repeats(rng: np.random.Generator, mean: float, repeats: int, n: int) -> list[np.ndarray]:
    return [rng.gamma(25.0, mean / 25.0, size=n) for _ in range(repeats)]  # CV 0.2


@pytest.mark.parametrize("repeats", [1, 2, 3, 5])
def test_a_known_ten_percent_gap_is_found_and_covered(repeats: int) -> None:
    # B's TPS is 10% higher: B better every time, and a 95% interval holds the true gap
    # (difference +10, ratio 1.1) in at least 35 of 40 seeded runs (nominal 38)
    found, covered = 0, 0
    for seed in range(40):
        rng = np.random.default_rng(7 + seed)
        a = _repeats(rng, 100.0, repeats, 200)
        b = _repeats(rng, 110.0, repeats, 200)
        d = compare_samples(a, b, "mean", higher_is_better=True, resamples=400, seed=seed)
        assert d is not None and d.between_repeats == (repeats >= 3)
        found += d.better is Better.B
        covered += d.difference.contains(10.0) and d.ratio is not None and d.ratio.contains(1.1)
    assert found == 40
    assert covered >= 35


def test_lower_is_better_metrics_name_the_faster_target() -> None:
    rng = np.random.default_rng(3)
    a = _repeats(rng, 55.0, 3, 150)  # TTFT ms: A is 10% slower
    b = _repeats(rng, 50.0, 3, 150)
    d = compare_samples(a, b, "p90", resamples=400, seed=2)
    assert d is not None and d.better is Better.B
    assert d.difference.high < 0


def test_identical_targets_show_no_difference_in_nine_of_ten_seeded_runs() -> None:
    outcomes = []
    for seed in range(10):
        rng = np.random.default_rng(100 + seed)
        a = _repeats(rng, 100.0, 3, 150)
        b = _repeats(rng, 100.0, 3, 150)
        d = compare_samples(a, b, "mean", higher_is_better=True, resamples=400, seed=seed)
        assert d is not None
        outcomes.append(d.better)
    assert outcomes.count(Better.NONE) >= 9


def test_between_repeat_drift_widens_the_interval() -> None:
    # drift that differs by repeat: with 5 repeats resampled, the interval must be wider
    rng = np.random.default_rng(5)
    drift = [0.8, 1.0, 1.25, 0.9, 1.1]
    a = [rng.normal(100 * f, 5, 100) for f in drift]
    b = [rng.normal(100 * f, 5, 100) for f in drift]
    within = compare_samples(a[:2], b[:2], higher_is_better=True, resamples=400, seed=0)
    between = compare_samples(a, b, higher_is_better=True, resamples=400, seed=0)
    assert within is not None and between is not None
    assert between.cv_a is not None and between.cv_a > 0.1 and between.cv_warning
    assert within.cv_a is not None


def test_same_inputs_same_interval_and_missing_repeat_gives_none() -> None:
    a = [np.arange(1.0, 50.0)] * 3
    b = [np.arange(2.0, 51.0)] * 3
    one = compare_samples(a, b, resamples=200, seed=4)
    two = compare_samples(a, b, resamples=200, seed=4)
    assert one == two
    assert compare_samples([[]], [[1.0]]) is None
    assert compare_samples([], [[1.0]]) is None


def test_verdict_rules() -> None:
    assert verdict(Bounds(1, 0.5, 2), higher_is_better=True) is Better.B
    assert verdict(Bounds(1, 0.5, 2), higher_is_better=False) is Better.A
    assert verdict(Bounds(-1, -2, -0.5), higher_is_better=True) is Better.A
    assert verdict(Bounds(-1, -2, -0.5), higher_is_better=False) is Better.B
    assert verdict(Bounds(0.1, -0.5, 2), higher_is_better=True) is Better.NONE
