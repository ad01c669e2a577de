"""MSER-5 crops a slow start and leaves a steady series alone; the drift gate refuses a
series that keeps moving and passes one that does not."""

from __future__ import annotations

import numpy as np

from servecap.stats.steady_state import drifts, mser_crop


def noisy(n: int, seed: int = 1) -> np.ndarray:
    return 100.0 + np.random.default_rng(seed).normal(0, 5, n)


def test_a_slow_start_is_cropped_and_no_more():
    series = noisy(200)
    series[:30] += 200.0  # the first 30 draws three times slower
    crop = mser_crop(list(series))
    assert 30 <= crop <= 35


def test_a_steady_series_keeps_almost_everything():
    for seed in range(10):
        assert mser_crop(list(noisy(200, seed))) <= 20


def test_a_short_series_is_not_cropped():
    assert mser_crop([500.0, 1.0, 1.0]) == 0


def test_a_series_that_keeps_slowing_drifts():
    series = noisy(200) * np.linspace(1.0, 2.0, 200)
    assert drifts(list(series))


def test_a_steady_series_does_not_drift():
    assert not any(drifts(list(noisy(200, seed))) for seed in range(20))


def test_too_few_draws_cannot_drift():
    assert not drifts([1.0] * 5 + [100.0] * 5)
