"""Percentiles with linear interpolation, and the tail convention for higher-is-better metrics.

"P90" in servecap always means the bad tail: the 90th percentile of TTFT or latency, the
10th percentile of TPS. The seed's tool took the 90th percentile of TPS, the optimistic side.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

STAT_QUANTILES: dict[str, float] = {"p50": 50.0, "p90": 90.0, "p99": 99.0}

# Fewer successful requests than this and a tail percentile rests on a handful of extreme
# samples (P90 of 20, like P99 of 200, interpolates the 2nd- and 3rd-worst): warn the reader.
MIN_SAMPLES: dict[str, int] = {"p50": 1, "p90": 20, "p99": 200}


def tail_quantile(stat: str, higher_is_better: bool) -> float:
    """The percentile that represents `stat` (p50, p90, p99) on the bad side of a metric."""
    q = STAT_QUANTILES[stat]
    return 100.0 - q if higher_is_better else q


def describe(
    values: Sequence[float] | np.ndarray, higher_is_better: bool = False
) -> dict[str, float | None]:
    """Mean, P50, P90 and P99 (tail-correct) of `values`; all None when there are none."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return {"mean": None, "p50": None, "p90": None, "p99": None}
    qs = [tail_quantile(s, higher_is_better) for s in ("p50", "p90", "p99")]
    p50, p90, p99 = np.percentile(arr, qs, method="linear")
    return {"mean": float(arr.mean()), "p50": float(p50), "p90": float(p90), "p99": float(p99)}


def small_sample_warnings(n: int) -> list[str]:
    """Warnings for the percentiles that `n` successful requests cannot support.

    No warning for n = 0: a level without successes has no percentiles to doubt.
    """
    return [
        f"{stat.upper()} from only {n} successful requests (want >= {need})"
        for stat, need in MIN_SAMPLES.items()
        if 0 < n < need
    ]
