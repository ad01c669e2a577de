"""A stored level's SLO verdicts with their uncertainty (pass / fail / undecided).

Bridges `LevelSummary` (its point columns and stored bootstrap intervals) to
`stats.verdict`. A level without a stored interval for the statistic (runs recorded before
intervals existed, imported summaries) is judged on a zero-width interval at its estimate,
so its verdict is the point verdict and never "undecided": there is nothing to be unsure
with. Such a metric's `interval` is reported as None, so the reader can tell.
"""

from __future__ import annotations

from servecap.core.summary import IntervalSummary, LevelSummary
from servecap.stats.bootstrap import Interval
from servecap.stats.verdict import LevelVerdicts, judge_slos


def _interval(level: LevelSummary, metric: str, stat: str) -> Interval | None:
    point = level.value(metric, stat)
    stored: IntervalSummary | None = level.interval(metric, stat)
    if stored is not None:
        return Interval(**stored.model_dump())
    if point is None:
        return None
    return Interval(point, point, point, confidence=0.0, n=level.n_ok or 0, resamples=0,
                    method="none (no stored interval)")


def stored_interval(level: LevelSummary, metric: str, stat: str) -> list[float] | None:
    """`[low, high]` of a stored interval, or None when the level has none."""
    stored = level.interval(metric, stat)
    return [stored.low, stored.high] if stored is not None else None


def level_verdicts(
    level: LevelSummary, statistic: str, ttft_slo_ms: float, tps_slo: float
) -> LevelVerdicts:
    """TTFT and TPS verdicts of one level on `statistic` (mean or p90)."""
    return judge_slos(
        _interval(level, "ttft", statistic),
        _interval(level, "tps", statistic),
        ttft_slo_ms=ttft_slo_ms,
        tps_slo=tps_slo,
        error_rate=level.error_rate,
    )


def sample_warnings(level: LevelSummary, statistic: str) -> list[str]:
    """The level's too-few-samples warnings that bear on `statistic` (P90 rests on >= 20)."""
    if statistic == "mean":
        return []
    label = f"{statistic.upper()} from only"
    return [w for w in level.warnings if w.startswith(label)]
