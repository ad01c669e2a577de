"""A level's bootstrap intervals: mean and P90 of TTFT, TPS and latency (`stats.bootstrap`).

Seeded with `SEED` so the same records always give the same summary.json; 95% percentile
bootstrap, 1,000 resamples (the method and its limits are `stats.bootstrap`'s docstring).
The values are the same per-request numbers the level's columns are computed from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from servecap.core.summary import (
    HIGHER_IS_BETTER,
    INTERVAL_METRICS,
    INTERVAL_STATS,
    IntervalSummary,
)
from servecap.stats.bootstrap import metric_intervals

SEED = 0


def level_intervals(
    values_by_metric: Mapping[str, Sequence[float]],
) -> dict[str, dict[str, IntervalSummary | None]]:
    """`{metric: {stat: interval or None}}` for the interval metrics a level measured."""
    chosen = {m: values_by_metric.get(m, []) for m in INTERVAL_METRICS}
    raw = metric_intervals(chosen, HIGHER_IS_BETTER, INTERVAL_STATS, seed=SEED)
    return {
        metric: {
            stat: IntervalSummary.model_validate(iv.as_dict()) if iv is not None else None
            for stat, iv in by_stat.items()
        }
        for metric, by_stat in raw.items()
    }
