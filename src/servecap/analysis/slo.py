"""SLO compliance matrix, capacity (C_max and users) on P90 and mean, and the SLO boundary.

The verdicts and capacity come from `stats.capacity.plan_levels`, the same definitions
`servecap plan` uses; this module only arranges them per configuration.
"""

from __future__ import annotations

from pydantic import BaseModel

from servecap.analysis.findings import Finding
from servecap.analysis.headline import c_max_text, lower_bound_note
from servecap.analysis.series import ConfigSeries
from servecap.core.config import SLO, Statistic
from servecap.core.level_key import LevelKey
from servecap.core.numbers import fmt_number
from servecap.kinds.registry import kind_of
from servecap.stats.capacity import LevelVerdict, plan_levels

STATISTICS: tuple[Statistic, ...] = ("p90", "mean")


class SloCell(LevelVerdict):
    """One config's verdict at one level: `stats.capacity`'s verdict, tagged with the config."""

    config: str

    @property
    def marks(self) -> str:
        return ("✓" if self.ttft_ok else "✗") + ("✓" if self.tps_ok else "✗")


class CapacityRow(BaseModel):
    """One config's capacity: `top` the highest level within SLO (C_max = its c for a closed
    loop)."""

    config: str
    statistic: Statistic
    top: LevelKey | None = None
    c_max: int | None
    latency_mean_s: float | None
    users: int | None
    c_max_lower_bound: bool = False  # every tested level passed
    # C_max's bracket (`stats.capacity.CapacityPlan`): neighbours, binding SLO, verdicts.
    below: int | float | None = None
    above: int | float | None = None
    binding: list[str] = []
    verdict_at_c_max: str | None = None
    verdict_above: str | None = None


class SloAnalysis(BaseModel):
    slo: SLO
    matrix: dict[str, list[SloCell]]  # statistic -> cells (config-major, level order)
    capacity: dict[str, list[CapacityRow]]  # statistic -> one row per config

    def cells(self, statistic: str, config: str) -> list[SloCell]:
        return [c for c in self.matrix[statistic] if c.config == config]

    def capacity_of(self, statistic: str, config: str) -> CapacityRow | None:
        return next((r for r in self.capacity[statistic] if r.config == config), None)


def slo_analysis(series: list[ConfigSeries], slo: SLO) -> SloAnalysis:
    """Verdicts and capacity for every config, on both statistics."""
    matrix: dict[str, list[SloCell]] = {}
    capacity: dict[str, list[CapacityRow]] = {}
    for stat in STATISTICS:
        judged = slo.model_copy(update={"statistic": stat})
        matrix[stat], capacity[stat] = [], []
        for cfg in series:
            plan = plan_levels(cfg.levels, judged, kind_of)
            matrix[stat].extend(
                SloCell(config=cfg.name, **dict(v)) for v in plan.levels
            )
            capacity[stat].append(
                CapacityRow(
                    config=cfg.name,
                    statistic=stat,
                    top=plan.top,
                    **plan.boundary(),
                )
            )
    return SloAnalysis(slo=slo, matrix=matrix, capacity=capacity)


def boundary_findings(analysis: SloAnalysis, configs: list[str]) -> list[Finding]:
    """For each config: up to which level it meets both SLOs, and what breaks first."""
    stat = analysis.slo.statistic
    findings: list[Finding] = []
    for config in configs:
        cells = analysis.cells(stat, config)
        cap = analysis.capacity_of(stat, config)
        first_bad = next((c for c in cells if not c.ok), None)
        findings.append(_boundary(config, stat, analysis.slo, cells, first_bad, cap))
    return findings


def _boundary(
    config: str,
    stat: str,
    slo: SLO,
    cells: list[SloCell],
    bad: SloCell | None,
    cap: CapacityRow | None,
) -> Finding:
    label = stat.upper() if stat == "p90" else "mean"
    if bad is None:
        top = cells[-1] if cells else None
        return Finding(
            kind="slo_boundary",
            section="slo",
            configs=[config],
            text=(
                f"{config}: meets both SLOs ({label}) at every level up to "
                f"{top.level if top else 'c=?'}"
                + (f"; {lower_bound_note(c_max)}."
                   if top and (c_max := _c_max(top.level)) is not None else ".")
            ),
        )
    misses = []
    if not bad.ttft_ok:
        misses.append(f"TTFT {label} {_num(bad.ttft, 1)} ms > {slo.ttft_ms:g} ms")
    if not bad.tps_ok:
        misses.append(f"TPS {label} {_num(bad.tps, 1)} tok/s < {slo.tps:g} tok/s")
    upto = f"up to {cap.top}" if cap and cap.top else "at no level"
    return Finding(
        kind="slo_boundary",
        section="slo",
        configs=[config],
        level=bad.level,
        text=f"{config}: meets both SLOs ({label}) {upto}; at {bad.level} "
        + " and ".join(misses)
        + ".",
        numbers={"ttft": bad.ttft, "tps": bad.tps, "c_max": cap.c_max if cap else None},
    )


_num = fmt_number


def capacity_findings(analysis: SloAnalysis) -> list[Finding]:
    """Users served per config on both statistics (relative ranking, not an absolute promise)."""
    findings: list[Finding] = []
    for stat in STATISTICS:
        rows = [r for r in analysis.capacity[stat] if r.users is not None]
        if not rows:
            continue
        best = max(rows, key=lambda r: r.users or 0)
        parts = ", ".join(
            f"{r.config} {r.users} ({c_max_text(r.c_max, r.c_max_lower_bound)})" for r in rows
        )
        findings.append(
            Finding(
                kind="capacity",
                section="capacity",
                configs=[best.config],
                text=(
                    f"Users within SLO ({stat.upper() if stat == 'p90' else 'mean'}, think time "
                    f"{analysis.slo.think_time_s:g} s): {parts}; most: {best.config}."
                ),
                numbers={r.config: float(r.users or 0) for r in rows},
            )
        )
    return findings


def _c_max(key: LevelKey) -> int | None:
    """The C_max a top level names, if its kind names one (a closed loop's c)."""
    c_max: int | None = kind_of(key).capacity_fields(key).get("c_max")
    return c_max
