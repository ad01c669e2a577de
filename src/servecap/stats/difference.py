"""The difference between two targets' statistic, with its confidence interval and verdict.

Each target ran the same level R times (repeats). A target's statistic (mean, P90, ...) is
the **mean over its repeats of each repeat's statistic**, so every repeat weighs the same
whatever its request count, and drift between repeats shows as spread rather than bias.

Method (a seeded percentile bootstrap, `stats.bootstrap`'s, one level up):

- Within repeats: each repeat's requests are resampled with replacement (B replicates of
  that repeat's statistic), independently per repeat and per target.
- Between repeats, when R >= 3: each replicate also resamples the R repeats with
  replacement (a two-stage, hierarchical bootstrap), so run-to-run variation enters the
  interval. Repeat r of both targets ran next to each other in the interleaved order, so
  the same repeat indices are drawn for both (paired): drift common to both cancels.
  With R < 3 the between-repeat spread cannot be estimated, so only requests are resampled.
- The difference is B - A and the ratio B / A, replicate by replicate; the interval is the
  (1 - confidence) / 2 and (1 + confidence) / 2 quantiles of those replicates.

Verdict: when the difference's interval excludes 0, the better target is the one on the good
side (higher TPS, lower TTFT or latency); otherwise "no significant difference". The ratio
has no interval when a replicate of A is not positive.

Run-to-run spread: each target's coefficient of variation over its repeats' statistics
(sample standard deviation / mean), with a warning above `CV_WARN`.

Contract: pure numpy; the same inputs and seed always give the same result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from servecap.stats.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, bootstrap_distribution

# With three repeats or more the repeats themselves are resampled (see the module's text).
MIN_REPEATS_BETWEEN = 3
# A run-to-run coefficient of variation above this is reported as a warning.
CV_WARN = 0.10


class Better(StrEnum):
    A = "a"
    B = "b"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class Bounds:
    estimate: float
    low: float
    high: float

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


def interval_difference(a: Bounds, b: Bounds) -> Bounds:
    """B - A with its interval by interval arithmetic ([B.low - A.high, B.high - A.low]):
    conservative, at least the two intervals' confidence when they are independent."""
    return Bounds(b.estimate - a.estimate, b.low - a.high, b.high - a.low)


@dataclass(frozen=True, slots=True)
class Difference:
    """B against A on one statistic of one metric at one level."""

    a: Bounds
    b: Bounds
    difference: Bounds
    ratio: Bounds | None
    better: Better
    cv_a: float | None
    cv_b: float | None
    repeats: int
    between_repeats: bool
    confidence: float

    @property
    def cv_warning(self) -> bool:
        return any(cv is not None and cv > CV_WARN for cv in (self.cv_a, self.cv_b))


def _per_repeat(
    repeats: Sequence[Sequence[float] | np.ndarray], stat: str, hib: bool, resamples: int,
    seed: np.random.SeedSequence,
) -> tuple[np.ndarray, np.ndarray]:
    """Each repeat's statistic (R,) and its bootstrap replicates (R, B)."""
    seeds = seed.spawn(len(repeats))
    pairs = [
        bootstrap_distribution(
            values, stat, higher_is_better=hib, resamples=resamples,
            seed=int(s.generate_state(1)[0]),
        )
        for values, s in zip(repeats, seeds, strict=True)
    ]
    return np.array([p[0] for p in pairs]), np.stack([p[1] for p in pairs])


def _cv(estimates: np.ndarray) -> float | None:
    if estimates.size < 2 or estimates.mean() == 0:
        return None
    return float(estimates.std(ddof=1) / abs(estimates.mean()))


def _bounds(estimate: float, replicates: np.ndarray, confidence: float) -> Bounds:
    low, high = np.percentile(replicates, [50 * (1 - confidence), 50 * (1 + confidence)])
    return Bounds(estimate, float(low), float(high))


def _pooled(boot: np.ndarray, picks: np.ndarray | None) -> np.ndarray:
    """Replicates of the mean over repeats: repeats resampled by `picks` (B, R) if given."""
    if picks is None:
        return boot.mean(axis=0)
    columns = np.arange(boot.shape[1])[:, None]
    return boot[picks, columns].mean(axis=1)


def compare_samples(
    a_repeats: Sequence[Sequence[float] | np.ndarray],
    b_repeats: Sequence[Sequence[float] | np.ndarray],
    stat: str = "mean",
    *,
    higher_is_better: bool = False,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Difference | None:
    """B - A and B / A on `stat`; None when a repeat of either has no values.

    `a_repeats[r]` holds target A's values (one per successful request) in repeat r.
    """
    if not a_repeats or not b_repeats or any(len(v) == 0 for v in [*a_repeats, *b_repeats]):
        return None
    root = np.random.SeedSequence(seed)
    seed_a, seed_b, seed_pick = root.spawn(3)
    est_a, boot_a = _per_repeat(a_repeats, stat, higher_is_better, resamples, seed_a)
    est_b, boot_b = _per_repeat(b_repeats, stat, higher_is_better, resamples, seed_b)
    n_rep = min(len(a_repeats), len(b_repeats))
    est_a, boot_a, est_b, boot_b = est_a[:n_rep], boot_a[:n_rep], est_b[:n_rep], boot_b[:n_rep]
    between = n_rep >= MIN_REPEATS_BETWEEN
    picks = (
        np.random.default_rng(seed_pick).integers(0, n_rep, size=(resamples, n_rep))
        if between else None
    )
    rep_a, rep_b = _pooled(boot_a, picks), _pooled(boot_b, picks)
    mean_a, mean_b = float(est_a.mean()), float(est_b.mean())
    diff = _bounds(mean_b - mean_a, rep_b - rep_a, confidence)
    ratio = (
        _bounds(mean_b / mean_a, rep_b / rep_a, confidence)
        if mean_a > 0 and np.all(rep_a > 0) else None
    )
    return Difference(
        a=_bounds(mean_a, rep_a, confidence),
        b=_bounds(mean_b, rep_b, confidence),
        difference=diff,
        ratio=ratio,
        better=verdict(diff, higher_is_better),
        cv_a=_cv(est_a),
        cv_b=_cv(est_b),
        repeats=n_rep,
        between_repeats=between,
        confidence=confidence,
    )


def verdict(difference: Bounds, higher_is_better: bool) -> Better:
    """Which target is better, if the interval of B - A excludes 0."""
    if difference.low > 0:
        return Better.B if higher_is_better else Better.A
    if difference.high < 0:
        return Better.A if higher_is_better else Better.B
    return Better.NONE
