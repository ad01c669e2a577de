"""Seeded bootstrap confidence intervals for a level's mean and tail percentiles.

Method: the **percentile bootstrap**. Draw `resamples` samples of size n with replacement from
the n measured values, compute the statistic on each, and take the `(1 - confidence) / 2` and
`(1 + confidence) / 2` quantiles of those statistics (linear interpolation) as the interval.
The statistic is computed exactly as `percentiles.describe` computes it: the mean, or the
tail-correct percentile with linear interpolation ("P90" of TPS is its 10th percentile).

Why not BCa: its acceleration term comes from a jackknife, and the jackknife is inconsistent
for quantiles (a leave-one-out percentile moves only when the removed value is near it), so
BCa's correction is unreliable for exactly the P90/P99 intervals servecap reports. The
percentile bootstrap needs no smoothness, respects monotone transforms (an interval for TTFT
in ms is the interval in s, scaled), and uses one method for every statistic so intervals are
comparable. Its known weakness is under-coverage on small, skewed samples: where that bites,
`percentiles.small_sample_warnings` already warns that the tail rests on too few requests.

Contract: the same values, statistic, confidence, resample count and seed always give the same
interval. No values gives `None`. Non-finite values or a confidence outside (0, 1) raise
`ValueError` (the caller passes successful requests' finite measurements). Work is vectorised
with numpy in chunks of about `_CHUNK_ELEMENTS` draws, so 1,000 resamples of 10,000 values
take a fraction of a second and bounded memory.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from servecap.stats.percentiles import STAT_QUANTILES, tail_quantile

METHOD = "percentile bootstrap"
DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 1000

# About 32 MiB of float64 (plus int32 indices) per chunk: fast, and bounded for big levels.
_CHUNK_ELEMENTS = 1 << 22


@dataclass(frozen=True, slots=True)
class Interval:
    """A statistic's point estimate and its bootstrap confidence interval."""

    estimate: float
    low: float
    high: float
    confidence: float
    n: int
    resamples: int
    method: str = METHOD

    def contains(self, value: float) -> bool:
        """Whether `value` lies inside the closed interval."""
        return self.low <= value <= self.high

    def as_dict(self) -> dict[str, float | int | str]:
        """A JSON-ready mapping (for summary.json and `plan --format json`)."""
        return asdict(self)


def _check(stats: Sequence[str], confidence: float, resamples: int) -> None:
    unknown = [s for s in stats if s != "mean" and s not in STAT_QUANTILES]
    if unknown:
        raise ValueError(f"unknown statistic(s) {unknown}; use mean or {sorted(STAT_QUANTILES)}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")


def _statistics(
    samples: np.ndarray, stats: Sequence[str], higher_is_better: bool
) -> dict[str, np.ndarray]:
    """Each statistic over the last axis of `samples` (one row per resample)."""
    out: dict[str, np.ndarray] = {}
    quantile_stats = [s for s in stats if s != "mean"]
    if "mean" in stats:
        out["mean"] = samples.mean(axis=-1)
    if quantile_stats:
        qs = [tail_quantile(s, higher_is_better) for s in quantile_stats]
        values = _linear_percentiles(samples, qs)
        out.update(zip(quantile_stats, values, strict=True))
    return out


def _linear_percentiles(samples: np.ndarray, qs: Sequence[float]) -> np.ndarray:
    """`np.percentile(samples, qs, axis=-1, method="linear")`, by partial sort.

    Partitioning only around the two order statistics each percentile needs is several times
    faster than `np.percentile` on many short rows (the bootstrap's shape), same values.
    """
    n = samples.shape[-1]
    pos = (n - 1) * np.asarray(qs, dtype=float) / 100.0
    lo = np.floor(pos).astype(np.intp)
    hi = np.minimum(lo + 1, n - 1)
    part = np.partition(samples, np.unique(np.concatenate([lo, hi])), axis=-1)
    below, above = part[..., lo], part[..., hi]
    return np.moveaxis(below + (pos - lo) * (above - below), -1, 0)


def _resampled(
    arr: np.ndarray, stats: Sequence[str], higher_is_better: bool, resamples: int, seed: int
) -> dict[str, np.ndarray]:
    """The bootstrap distribution of each statistic: `resamples` values per statistic."""
    rng = np.random.default_rng(seed)
    n = arr.size
    per_chunk = max(1, _CHUNK_ELEMENTS // n)
    parts: dict[str, list[np.ndarray]] = {s: [] for s in stats}
    done = 0
    while done < resamples:
        rows = min(per_chunk, resamples - done)
        idx = rng.integers(0, n, size=(rows, n), dtype=np.int32 if n < 2**31 else np.int64)
        for stat, values in _statistics(arr[idx], stats, higher_is_better).items():
            parts[stat].append(values)
        done += rows
    return {stat: np.concatenate(chunks) for stat, chunks in parts.items()}


def bootstrap_intervals(
    values: Sequence[float] | np.ndarray,
    stats: Sequence[str] = ("mean", "p90"),
    *,
    higher_is_better: bool = False,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, Interval | None]:
    """Intervals for several statistics of one metric, all from the same resamples.

    `stats` names `mean`, `p50`, `p90` or `p99`; percentiles are tail-correct for
    `higher_is_better` metrics. Every statistic is `None` when `values` is empty.
    """
    _check(stats, confidence, resamples)
    arr = np.asarray(values, dtype=float).ravel()
    if arr.size == 0:
        return {stat: None for stat in stats}
    if not np.all(np.isfinite(arr)):
        raise ValueError("bootstrap values must be finite")
    estimates = _statistics(arr, stats, higher_is_better)
    boot = _resampled(arr, stats, higher_is_better, resamples, seed)
    tails = [50.0 * (1.0 - confidence), 50.0 * (1.0 + confidence)]
    out: dict[str, Interval | None] = {}
    for stat in stats:
        low, high = np.percentile(boot[stat], tails, method="linear")
        out[stat] = Interval(
            estimate=float(estimates[stat]),
            low=float(low),
            high=float(high),
            confidence=confidence,
            n=int(arr.size),
            resamples=resamples,
        )
    return out


def bootstrap_interval(
    values: Sequence[float] | np.ndarray,
    stat: str = "mean",
    *,
    higher_is_better: bool = False,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Interval | None:
    """The interval for one statistic (see `bootstrap_intervals`)."""
    return bootstrap_intervals(
        values,
        (stat,),
        higher_is_better=higher_is_better,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )[stat]


def metric_intervals(
    values_by_metric: Mapping[str, Sequence[float] | np.ndarray],
    higher_is_better: Collection[str] = (),
    stats: Sequence[str] = ("mean", "p90"),
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, dict[str, Interval | None]]:
    """One level's intervals: `{metric: {stat: Interval | None}}` (e.g. ttft, tps, latency).

    Every metric uses the same `seed`, so metrics measured on the same requests are resampled
    by the same request indices (paired); a metric with fewer values draws its own.
    """
    return {
        metric: bootstrap_intervals(
            values,
            stats,
            higher_is_better=metric in higher_is_better,
            confidence=confidence,
            resamples=resamples,
            seed=seed,
        )
        for metric, values in values_by_metric.items()
    }


def bootstrap_distribution(
    values: Sequence[float] | np.ndarray,
    stat: str = "mean",
    *,
    higher_is_better: bool = False,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> tuple[float, np.ndarray]:
    """The statistic of `values` and its `resamples` bootstrap replicates (for differences
    between samples, where the interval is taken on a function of several distributions).
    `values` must be non-empty and finite."""
    _check((stat,), 0.5, resamples)
    arr = np.asarray(values, dtype=float).ravel()
    if arr.size == 0 or not np.all(np.isfinite(arr)):
        raise ValueError("bootstrap values must be non-empty and finite")
    estimate = float(_statistics(arr, (stat,), higher_is_better)[stat])
    boot = _resampled(arr, (stat,), higher_is_better, resamples, seed)
    return estimate, boot[stat]
