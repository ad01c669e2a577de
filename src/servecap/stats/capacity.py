"""SLO compliance per level, C_max, and the users a deployment serves by Little's law.

Pure functions over level summaries. Definitions are DESIGN.md's:
C_max is the highest level at which that level and every lower one meet both SLOs on the
chosen statistic; users N = C_max * (1 + T_think / L_mean), L_mean the MEAN latency at C_max.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from servecap.core.config import SLO
from servecap.core.summary import LevelSummary


class LevelVerdict(BaseModel):
    """One level judged against the SLOs (values are on the chosen statistic)."""

    concurrency: int
    ttft: float | None
    tps: float | None
    ttft_ok: bool
    tps_ok: bool

    @property
    def ok(self) -> bool:
        return self.ttft_ok and self.tps_ok


class CapacityPlan(BaseModel):
    """The capacity of one run under one SLO."""

    c_max: int | None
    latency_mean_s: float | None
    users: int | None
    levels: list[LevelVerdict]


def judge_level(level: LevelSummary, slo: SLO) -> LevelVerdict:
    """Does this level meet the TTFT and TPS objectives on `slo.statistic`?

    A level with failed requests misses the SLO unless every request succeeded: a failure is
    an SLO miss (goodput), so its TTFT/TPS pass only if the error rate is zero.
    """
    ttft = level.value("ttft", slo.statistic)
    tps = level.value("tps", slo.statistic)
    clean = not level.error_rate
    ttft_ok = ttft is not None and ttft <= slo.ttft_ms and clean
    tps_ok = tps is not None and tps >= slo.tps and clean
    return LevelVerdict(
        concurrency=level.concurrency, ttft=ttft, tps=tps, ttft_ok=ttft_ok, tps_ok=tps_ok
    )


def users_by_littles_law(c_max: int, latency_mean_s: float, think_time_s: float) -> int:
    """Users served: each user holds a stream for L and thinks for T between requests."""
    if latency_mean_s <= 0:
        raise ValueError("mean latency must be positive")
    return round(c_max * (1.0 + think_time_s / latency_mean_s))


def plan_levels(levels: Sequence[LevelSummary], slo: SLO) -> CapacityPlan:
    """C_max, L_mean at C_max and users for one run's levels."""
    ordered = sorted(levels, key=lambda lv: lv.concurrency)
    verdicts = [judge_level(level, slo) for level in ordered]
    best: LevelSummary | None = None
    for level, verdict in zip(ordered, verdicts, strict=True):
        if not verdict.ok:
            break
        best = level
    if best is None or best.latency_mean_s is None:
        return CapacityPlan(c_max=None, latency_mean_s=None, users=None, levels=verdicts)
    users = users_by_littles_law(best.concurrency, best.latency_mean_s, slo.think_time_s)
    return CapacityPlan(
        c_max=best.concurrency, latency_mean_s=best.latency_mean_s, users=users, levels=verdicts
    )
