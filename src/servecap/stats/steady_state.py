"""Where a level's steady state starts, and whether it holds: MSER-5 and a drift gate.

Warm-up: MSER-5 (White, 1997) averages the series in batches of five and picks the
truncation d (in batches, at most half of them) that minimises the marginal standard
error of the rest, sum((Y_i - mean_d)^2) / (k - d)^2; the first 5d draws are cropped.

Drift: once cropped, the kept series is split in halves; it drifts when the halves' medians
differ by more than `DRIFT` of the first half's and a rank test (Mann-Whitney U, normal
approximation) says the difference is not noise at `DRIFT_Z`. Medians and ranks, because a
latency series has a heavy tail that would swing means; both conditions, because a long
level detects tiny, harmless shifts and a short noisy one shows large, meaningless ones.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

BATCH = 5
DRIFT = 0.2  # a 20% shift of the median between halves is not a steady state
DRIFT_Z = 3.0
MIN_DRIFT_N = 20  # fewer kept draws cannot tell a drift from noise


def mser_crop(series: Sequence[float]) -> int:
    """How many leading draws MSER-5 crops (a multiple of five; 0 for short series)."""
    k = len(series) // BATCH
    if k < 4:
        return 0
    batches = np.asarray(series[: k * BATCH], dtype=float).reshape(k, BATCH).mean(axis=1)
    best, best_d = np.inf, 0
    for d in range(k // 2 + 1):
        rest = batches[d:]
        score = float(((rest - rest.mean()) ** 2).sum()) / (rest.size**2)
        if score < best:
            best, best_d = score, d
    return best_d * BATCH


def drifts(series: Sequence[float]) -> bool:
    """Whether the (cropped) series still shifts between its halves (see the module)."""
    if len(series) < MIN_DRIFT_N:
        return False
    arr = np.asarray(series, dtype=float)
    first, second = arr[: arr.size // 2], arr[arr.size // 2 :]
    base = float(np.median(first))
    shift = abs(float(np.median(second)) - base) / base if base > 0 else 0.0
    return shift > DRIFT and abs(_rank_z(first, second)) > DRIFT_Z


def _rank_z(a: np.ndarray, b: np.ndarray) -> float:
    """Mann-Whitney U of `a` against `b` as a z-score (ties get average ranks)."""
    both = np.concatenate([a, b])
    order = both.argsort(kind="mergesort")
    ranks = np.empty(both.size)
    ranks[order] = np.arange(1, both.size + 1)
    for value in np.unique(both):  # average ranks over ties
        tied = both == value
        if tied.sum() > 1:
            ranks[tied] = ranks[tied].mean()
    n1, n2 = a.size, b.size
    u = ranks[:n1].sum() - n1 * (n1 + 1) / 2
    sd = np.sqrt(n1 * n2 * (n1 + n2 + 1) / 12.0)
    return float((u - n1 * n2 / 2) / sd) if sd > 0 else 0.0
