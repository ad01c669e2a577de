"""The whole comparison: one call from level summaries to numbers, findings and choices."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, Field

from servecap.analysis.aggregate import (
    AggregateSeries,
    ThroughputPoint,
    aggregate_output,
    collapse_output_findings,
    peak_findings,
    system_throughput,
)
from servecap.analysis.collapse import flat_throughput_findings, ttft_jump_findings
from servecap.analysis.consistency import (
    ConsistencyRow,
    consistency_findings,
    consistency_rows,
)
from servecap.analysis.findings import Finding
from servecap.analysis.metrics_view import metric_findings
from servecap.analysis.recommend import Context, Recommendation, recommend
from servecap.analysis.series import ConfigSeries
from servecap.analysis.server_findings import server_findings, spec_pays_findings
from servecap.analysis.slo import SloAnalysis, boundary_findings, capacity_findings, slo_analysis
from servecap.analysis.speedup import Pair, PairSpeedup, pair_speedup, speedup_findings
from servecap.core.config import SLO
from servecap.core.level_key import LevelKey, keys_text
from servecap.kinds.base import KindText
from servecap.kinds.registry import DEFAULT_KIND, KINDS, kind_of


class AnalysisOptions(BaseModel):
    """SLOs and scenario bounds, on the levels' values. The bounds are the seed's, for a
    closed loop: low c<=8, high c>16."""

    slo: SLO = Field(default_factory=SLO)
    low_load_max: int = 8
    high_load_above: int = 16
    reference: dict[str, str] = Field(default_factory=dict)


class Analysis(BaseModel):
    configs: list[str]
    levels: list[LevelKey]
    imported: list[str]
    aggregates: list[AggregateSeries]
    throughput: dict[str, list[ThroughputPoint]]
    speedups: list[PairSpeedup]
    consistency: list[ConsistencyRow]
    slo: SloAnalysis
    findings: list[Finding]
    recommendations: list[Recommendation]

    @property
    def level_kind(self) -> KindText:
        """How the compared levels present themselves (axis, labels, methodology)."""
        return kind_of(self.levels[0]).text if self.levels else KINDS[DEFAULT_KIND].text

    def section(self, name: str) -> list[Finding]:
        return [f for f in self.findings if f.section == name]

    def aggregate(self, config: str) -> AggregateSeries:
        return next(a for a in self.aggregates if a.config == config)


def analyse(
    series: list[ConfigSeries], pairs: list[Pair], options: AnalysisOptions | None = None
) -> Analysis:
    """Compare `series` (one per configuration); `pairs` name spec/baseline comparisons."""
    options = options or AnalysisOptions()
    by_name = {s.name: s for s in series}
    levels = sorted({key for s in series for key in s.keys})
    aggregates = [aggregate_output(s) for s in series]
    speedups = [pair_speedup(p, by_name[p.spec], by_name[p.base]) for p in pairs]
    rows = [row for s in series for row in consistency_rows(s)]
    slo = slo_analysis(series, options.slo)
    jumps = [f for s in series for f in ttft_jump_findings(s)]
    findings = [
        *_data_notes(series),
        *metric_findings(series, levels),
        *jumps,
        *peak_findings(aggregates),
        *collapse_output_findings(aggregates),
        *[
            f
            for s, a in zip(series, aggregates, strict=True)
            for f in flat_throughput_findings(s, a)
        ],
        *[f for sp in speedups for f in speedup_findings(sp)],
        *boundary_findings(slo, [s.name for s in series]),
        *capacity_findings(slo),
        *consistency_findings(rows, jumps),
        *[f for s in series for f in server_findings(s)],
        *[f for p in pairs for f in spec_pays_findings(by_name[p.spec], by_name[p.base])],
    ]
    shared = scenario_levels(series, levels)
    ctx = Context(
        series=by_name,
        aggregates={a.config: a for a in aggregates},
        slo=slo,
        low_levels=[k for k in shared if k.value <= options.low_load_max] or shared[:1],
        high_levels=[k for k in shared if k.value > options.high_load_above] or shared[-1:],
    )
    return Analysis(
        configs=[s.name for s in series],
        levels=levels,
        imported=[s.name for s in series if s.imported],
        aggregates=aggregates,
        throughput={s.name: system_throughput(s) for s in series},
        speedups=speedups,
        consistency=rows,
        slo=slo,
        findings=findings,
        recommendations=recommend(ctx, options.reference),
    )


def scenario_levels(series: list[ConfigSeries], levels: list[LevelKey]) -> list[LevelKey]:
    """The levels the scenarios compare configurations at: those of the load kind most
    configurations were measured in (concurrency on a tie). A sessions or rate run beside
    concurrency sweeps shares no level with them; its users=400 is not a high c."""
    kinds = Counter(name for s in series for name in {kind_of(k).name for k in s.keys})
    if not kinds:
        return levels
    chosen = KINDS[max(kinds, key=lambda name: (kinds[name], name == DEFAULT_KIND))]
    return [k for k in levels if chosen.owns(k)]


def _data_notes(series: list[ConfigSeries]) -> list[Finding]:
    """What the reader must know about the data before trusting a number."""
    notes: list[Finding] = []
    imported = [s.name for s in series if s.imported]
    if imported:
        notes.append(
            Finding(
                kind="imported_definitions",
                section="data",
                configs=imported,
                severity="notice",
                text=(
                    f"{', '.join(imported)}: imported summaries. Their published P90 of TPS "
                    "may be the upper 90th percentile (the seed tool's optimistic side), not "
                    "servecap's low tail, so TPS P90 compliance is optimistic; their published "
                    "RPS is one stream's rate (requests / sum of latencies), so this report "
                    "shows system throughput as c / mean latency and aggregate output as "
                    "TPS mean x c instead."
                ),
            )
        )
    for s in series:
        warned = [f"{lv.key}: {lv.warnings[0]}" for lv in s.levels if lv.warnings]
        if warned:
            notes.append(Finding(
                kind="level_warnings", section="data", configs=[s.name], severity="notice",
                text=f"{s.name}: " + "; ".join(warned[:4]) + ("; ..." if len(warned) > 4 else ""),
            ))
        bound = [lv.key for lv in s.levels if lv.client_bound]
        if bound:
            notes.append(
                Finding(
                    kind="client_bound",
                    section="data",
                    configs=[s.name],
                    severity="warning",
                    text=f"{s.name}: the load generator could not keep up at "
                    f"{keys_text(bound)}; those levels understate the server.",
                )
            )
    return notes
