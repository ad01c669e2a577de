"""Order-statistic bounds on a quantile: the ranks the binomial gives, and their coverage."""

from __future__ import annotations

import numpy as np
import pytest

from servecap.stats.quantile_bounds import binomial_cdf, lower_rank, quantile_bounds, upper_rank


def test_the_binomial_cdf_matches_a_direct_sum():
    cdf = binomial_cdf(5, 0.3)
    assert cdf[0] == pytest.approx(0.7**5)
    assert cdf[1] == pytest.approx(0.7**5 + 5 * 0.3 * 0.7**4)
    assert cdf[-1] == pytest.approx(1.0)


def test_an_upper_bound_on_p90_at_95_needs_29_draws():
    """0.9^29 = 0.047 < 0.05 <= 0.9^28 = 0.052: the largest of 29 draws bounds P90."""
    assert upper_rank(28, 0.9, 0.05) is None
    assert upper_rank(29, 0.9, 0.05) == 29


def test_a_lower_bound_on_p90_from_few_draws():
    """P(X_(1) <= P90) = 1 - 0.1^n: two draws already give 99%."""
    assert lower_rank(2, 0.9, 0.01) == 1
    assert lower_rank(1, 0.9, 0.01) is None


@pytest.mark.parametrize("q", [0.1, 0.5, 0.9])
def test_each_bound_covers_the_true_quantile_at_its_confidence(q):
    """Seeded: 2,000 samples of 100 exponential draws; each one-sided bound must cover
    the true quantile in at least 95% of them, less three binomial standard deviations
    (0.5 points at 2,000 trials), which leaves room for chance and no more."""
    rng = np.random.default_rng(7)
    true = -np.log(1 - q)
    trials, alpha = 2000, 0.05
    low_ok = high_ok = 0
    for _ in range(trials):
        low, high = quantile_bounds(rng.exponential(size=100), q, alpha)
        assert low is not None and high is not None
        low_ok += low <= true
        high_ok += high >= true
    floor = 1 - alpha - 3 * np.sqrt(alpha * (1 - alpha) / trials)
    assert low_ok / trials >= floor
    assert high_ok / trials >= floor
