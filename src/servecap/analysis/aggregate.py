"""Aggregate output (tok/s of the whole system) and system throughput per level.

A measured run has `output_tok_s` (sum of output tokens / the level's wall time); a
summary-only run (always a closed loop) has only per-user TPS, so its aggregate output is
TPS mean x c, the seed's formula, and the result says which one it used. Likewise system
throughput is the measured requests/s, or c / mean latency (Little's law for a closed loop
with no think time) for an imported run, whose published "RPS" is one stream's rate.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Literal

from pydantic import BaseModel

from servecap.analysis.findings import Finding
from servecap.analysis.series import ConfigSeries, fmt, ratio
from servecap.core.level_key import LevelKey
from servecap.core.summary import LevelSummary
from servecap.kinds.registry import kind_of

AggregateSource = Literal["measured", "tps_x_c"]
ThroughputSource = Literal["measured", "c_over_latency"]


class AggregatePoint(BaseModel):
    level: LevelKey
    tok_s: float
    source: AggregateSource


class AggregateSeries(BaseModel):
    config: str
    points: list[AggregatePoint]
    peak_level: LevelKey | None
    peak_tok_s: float | None

    @property
    def sources(self) -> set[str]:
        return {p.source for p in self.points}

    def at(self, key: LevelKey) -> float | None:
        for point in self.points:
            if point.level == key:
                return point.tok_s
        return None


class ThroughputPoint(BaseModel):
    level: LevelKey
    rps: float
    source: ThroughputSource
    published_rps: float | None = None


def aggregate_output(series: ConfigSeries) -> AggregateSeries:
    """Aggregate output per level and the level where it peaks."""
    points: list[AggregatePoint] = []
    for level in series.levels:
        if level.output_tok_s is not None and not series.imported:
            points.append(
                AggregatePoint(level=level.key, tok_s=level.output_tok_s, source="measured")
            )
        elif level.tps_mean is not None and (streams := _closed_streams(level)):
            points.append(
                AggregatePoint(level=level.key, tok_s=level.tps_mean * streams, source="tps_x_c")
            )
    peak = max(points, key=lambda p: p.tok_s, default=None)
    return AggregateSeries(
        config=series.name,
        points=points,
        peak_level=peak.level if peak else None,
        peak_tok_s=peak.tok_s if peak else None,
    )


def _closed_streams(level: LevelSummary) -> int | None:
    """The streams a level holds throughout (its kind says: a closed loop's c), whose
    per-user rates add up to the system's; None for a kind without a fixed number."""
    return kind_of(level.key).streams(level.key)


def system_throughput(series: ConfigSeries) -> list[ThroughputPoint]:
    """Completed requests/s of the whole system per level."""
    points: list[ThroughputPoint] = []
    for level in series.levels:
        if level.rps is not None and not series.imported:
            points.append(ThroughputPoint(level=level.key, rps=level.rps, source="measured"))
        elif level.latency_mean_s and (streams := _closed_streams(level)):
            points.append(
                ThroughputPoint(
                    level=level.key,
                    rps=streams / level.latency_mean_s,
                    source="c_over_latency",
                    published_rps=level.rps,
                )
            )
    return points


def peak_findings(aggregates: list[AggregateSeries]) -> list[Finding]:
    """The peak aggregate-output level of each config, and the overall best."""
    findings: list[Finding] = []
    for agg in aggregates:
        if agg.peak_level is None or agg.peak_tok_s is None:
            continue
        how = "TPS mean x c" if agg.sources == {"tps_x_c"} else "measured output tok/s"
        last = agg.points[-1]
        after = (
            f"; it then falls to {last.tok_s:.0f} tok/s at {last.level}"
            if last.level != agg.peak_level
            else ""
        )
        findings.append(
            Finding(
                kind="peak_output",
                section="aggregate",
                configs=[agg.config],
                level=agg.peak_level,
                text=(
                    f"{agg.config}: aggregate output peaks at {agg.peak_level} with "
                    f"{agg.peak_tok_s:.0f} tok/s ({how}){after}."
                ),
                numbers={"peak_tok_s": agg.peak_tok_s, "last_tok_s": last.tok_s},
            )
        )
    return findings


def collapse_output_findings(aggregates: list[AggregateSeries]) -> list[Finding]:
    """Aggregate output that falls when load doubles (or otherwise rises): a bottleneck."""
    findings: list[Finding] = []
    for agg in aggregates:
        for prev, cur in pairwise(agg.points):
            if cur.tok_s >= prev.tok_s:
                continue
            change = ratio(cur.tok_s, prev.tok_s)
            findings.append(
                Finding(
                    kind="output_falls",
                    section="aggregate",
                    configs=[agg.config],
                    level=cur.level,
                    severity="warning",
                    text=(
                        f"{agg.config}: aggregate output falls from {prev.tok_s:.0f} tok/s at "
                        f"{prev.level} to {cur.tok_s:.0f} tok/s at {cur.level} "
                        f"({fmt((change or 0) * 100 - 100, 1)}%): more load yields less output."
                    ),
                    numbers={"from_tok_s": prev.tok_s, "to_tok_s": cur.tok_s},
                )
            )
    return findings
