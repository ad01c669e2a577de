"""Distribution-free confidence bounds on a quantile, from order statistics.

For n independent draws of a continuous variable X with q-quantile ξ, the number K of draws
below ξ is Binomial(n, q). The u-th smallest draw X_(u) lies at or above ξ exactly when
fewer than u draws lie below it, so P(X_(u) >= ξ) = P(K <= u - 1): the smallest u with
that probability at least 1 - α makes X_(u) an upper bound on ξ at confidence 1 - α. By
the same argument P(X_(l) <= ξ) = P(K >= l), and the largest such l gives a lower bound.
No shape is assumed; the price is a minimum sample: an upper bound on P90 at 95% needs
n >= 29 (0.9^29 < 0.05), on P99 at 95% n >= 299.
"""

from __future__ import annotations

import math

import numpy as np


def binomial_cdf(n: int, p: float) -> np.ndarray:
    """P(K <= k) for k = 0..n, K ~ Binomial(n, p), computed in log space (stable for large n)."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must lie strictly between 0 and 1")
    k = np.arange(n + 1)
    log_choose = np.array([math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                           for i in range(n + 1)])
    log_pmf = log_choose + k * math.log(p) + (n - k) * math.log1p(-p)
    return np.minimum(np.cumsum(np.exp(log_pmf)), 1.0)


def upper_rank(n: int, q: float, alpha: float) -> int | None:
    """The smallest rank u (1-based) with P(X_(u) >= ξ_q) >= 1 - alpha; None when even the
    largest of n draws is not an upper bound at that confidence."""
    if n < 1:
        return None
    cdf = binomial_cdf(n, q)  # cdf[u - 1] = P(K <= u - 1)
    ranks = np.nonzero(cdf[:n] >= 1.0 - alpha)[0]
    return int(ranks[0]) + 1 if ranks.size else None


def lower_rank(n: int, q: float, alpha: float) -> int | None:
    """The largest rank l (1-based) with P(X_(l) <= ξ_q) >= 1 - alpha; None when even the
    smallest of n draws is not a lower bound at that confidence."""
    if n < 1:
        return None
    cdf = binomial_cdf(n, q)  # P(K >= l) = 1 - cdf[l - 1]
    ranks = np.nonzero(1.0 - cdf[:n] >= 1.0 - alpha)[0]
    return int(ranks[-1]) + 1 if ranks.size else None


def quantile_bounds(
    values: list[float] | np.ndarray, q: float, alpha: float
) -> tuple[float | None, float | None]:
    """One-sided (lower, upper) bounds on the q-quantile, each at confidence 1 - alpha;
    None for a side the sample is too small to bound."""
    ordered = np.sort(np.asarray(values, dtype=float))
    n = ordered.size
    low, high = lower_rank(n, q, alpha), upper_rank(n, q, alpha)
    return (float(ordered[low - 1]) if low else None,
            float(ordered[high - 1]) if high else None)
