"""Is an SLO met, decided from a growing sample: pass, fail, or not yet.

A percentile SLO ("P90 TTFT <= 1000 ms", "P90 TPS >= 15", the bad tail as everywhere in
servecap) is judged by order-statistic bounds on the quantile (`quantile_bounds`): it passes
once the bound on the bad side meets the threshold, fails once the bound on the good side
misses it. A mean SLO is judged by a normal interval of the mean (at least `MIN_MEAN_N`
draws, where the central limit theorem is a fair approximation for latencies).

The error budget: a verdict is wrong with probability at most `alpha` per look, on the
assumption that the draws are independent and from one distribution (a steady state;
`steady_state` crops the start and refuses a drifting series). Requests at one load level
share a server and are not independent, so the stated confidence is nominal; the caller
spreads `alpha` over its looks and metrics (Bonferroni), which is conservative.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from servecap.stats.percentiles import tail_quantile
from servecap.stats.quantile_bounds import quantile_bounds
from servecap.stats.verdict import Verdict

MIN_MEAN_N = 30


@dataclass(frozen=True, slots=True)
class Threshold:
    """One SLO: a metric's statistic (mean, p50, p90, p99) against a limit."""

    metric: str  # "ttft" or "tps"
    statistic: str
    limit: float
    higher_is_better: bool


@dataclass(frozen=True, slots=True)
class Judged:
    """A threshold's verdict on a sample, with the bounds it rests on."""

    threshold: Threshold
    verdict: Verdict
    low: float | None
    high: float | None
    n: int


def judge(values: list[float] | np.ndarray, threshold: Threshold, alpha: float) -> Judged:
    """The verdict on `values`; each side's bound holds at confidence 1 - alpha."""
    arr = np.asarray(values, dtype=float)
    if threshold.statistic == "mean":
        low, high = _mean_bounds(arr, alpha)
    else:
        q = tail_quantile(threshold.statistic, threshold.higher_is_better) / 100.0
        low, high = quantile_bounds(arr, q, alpha)
    return Judged(threshold, _verdict(low, high, threshold), low, high, int(arr.size))


def _mean_bounds(values: np.ndarray, alpha: float) -> tuple[float | None, float | None]:
    if values.size < MIN_MEAN_N:
        return None, None
    z = NormalDist().inv_cdf(1.0 - alpha)
    half = z * float(values.std(ddof=1)) / float(np.sqrt(values.size))
    mean = float(values.mean())
    return mean - half, mean + half


def _verdict(low: float | None, high: float | None, threshold: Threshold) -> Verdict:
    """Pass when the bad-side bound meets the limit, fail when the good-side one misses."""
    limit = threshold.limit
    if threshold.higher_is_better:
        if low is not None and low >= limit:
            return Verdict.PASS
        if high is not None and high < limit:
            return Verdict.FAIL
    else:
        if high is not None and high <= limit:
            return Verdict.PASS
        if low is not None and low > limit:
            return Verdict.FAIL
    return Verdict.UNDECIDED


def combine(judged: list[Judged]) -> Verdict:
    """All thresholds must pass; any one failing fails the level."""
    verdicts = {j.verdict for j in judged}
    if Verdict.FAIL in verdicts:
        return Verdict.FAIL
    return Verdict.PASS if verdicts == {Verdict.PASS} else Verdict.UNDECIDED
