"""Recommendations per scenario: each names a configuration, why, and the runner-up's numbers.

Every scenario scores each configuration from the data; the best score wins and the second
is shown beside it, so a reader who expected another choice sees the numbers behind both.
A `reference` choice (for instance a published report's) is compared the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, Field

from servecap.analysis.aggregate import AggregateSeries
from servecap.analysis.series import ConfigSeries
from servecap.analysis.slo import SloAnalysis, SloCell
from servecap.core.level_key import LevelKey, bound_text, keys_text

Score = tuple[float, ...]


@dataclass(frozen=True)
class Scored:
    score: Score | None
    text: str
    numbers: dict[str, float | None]


class Recommendation(BaseModel):
    scenario: str
    title: str
    config: str | None
    reason: str
    numbers: dict[str, float | None] = Field(default_factory=dict)
    runner_up: str | None = None
    runner_up_reason: str | None = None
    reference: str | None = None
    reference_note: str | None = None


@dataclass(frozen=True)
class Context:
    series: dict[str, ConfigSeries]
    aggregates: dict[str, AggregateSeries]
    slo: SloAnalysis
    low_levels: list[LevelKey]
    high_levels: list[LevelKey]


def score_interactive(ctx: Context, name: str) -> Scored:
    cfg, stat = ctx.series[name], ctx.slo.slo.statistic
    lows = [cfg.at(c) for c in ctx.low_levels]
    tps = [lv.tps_mean for lv in lows if lv is not None and lv.tps_mean]
    cells = {c.level: c for c in ctx.slo.cells(stat, name)}
    meets = all(c in cells and cells[c].ok for c in ctx.low_levels)
    if len(tps) != len(ctx.low_levels) or not tps:
        where = bound_text(ctx.low_levels[-1], "<=")
        return Scored(None, f"{name}: not measured at every level {where}", {})
    geo = math.exp(sum(math.log(t) for t in tps) / len(tps))
    text = (
        f"{name}: TPS mean {' / '.join(f'{t:.1f}' for t in tps)} tok/s at "
        f"{keys_text(ctx.low_levels)} (geometric mean {geo:.1f})"
        + ("" if meets else f", but misses an SLO ({stat}) there")
    )
    return Scored((float(meets), geo), text, {"tps_geomean": geo})


def score_high_load(ctx: Context, name: str) -> Scored:
    stat = ctx.slo.slo.statistic
    cells = {c.level: c for c in ctx.slo.cells(stat, name)}
    passing = [c for c in ctx.high_levels if c in cells and cells[c].ok]
    top = max(passing, default=None)
    output = ctx.aggregates[name].at(top) if top is not None else None
    margin = _slo_margin(ctx, [cells[c] for c in ctx.high_levels if c in cells])
    text = (
        f"{name}: meets both SLOs ({stat}) at "
        f"{keys_text(passing) if passing else 'none'} "
        f"of {keys_text(ctx.high_levels)}"
        + (f"; aggregate output {output:.0f} tok/s at {top}" if output is not None else "")
        + ("" if passing else f"; closest to the SLOs there (margin {margin:.2f}, 1 = just met)")
    )
    # When no config meets the SLOs at high load, the one closest to them ranks first.
    score = (float(len(passing)), output or 0.0, margin)
    return Scored(score, text, {"passing_levels": len(passing), "slo_margin": margin})


def _slo_margin(ctx: Context, cells: list[SloCell]) -> float:
    """Mean over levels of the worse of TTFT SLO / TTFT and TPS / TPS SLO (>= 1 meets both)."""
    slo = ctx.slo.slo
    margins = [
        min(slo.ttft_ms / cell.ttft, cell.tps / slo.tps if slo.tps else math.inf)
        for cell in cells
        if cell.ttft and cell.tps is not None
    ]
    return sum(margins) / len(margins) if margins else 0.0


def score_max_throughput(ctx: Context, name: str) -> Scored:
    agg = ctx.aggregates[name]
    if agg.peak_tok_s is None or agg.peak_level is None:
        return Scored(None, f"{name}: no aggregate output", {})
    cells = {c.level: c for c in ctx.slo.cells(ctx.slo.slo.statistic, name)}
    cell = cells.get(agg.peak_level)
    stat = ctx.slo.slo.statistic
    slo_note = "" if cell is None or cell.ok else f", where it misses an SLO ({stat})"
    text = f"{name}: {agg.peak_tok_s:.0f} tok/s at {agg.peak_level}{slo_note}"
    return Scored((agg.peak_tok_s,), text, {"peak_tok_s": agg.peak_tok_s})


def score_min_itl(ctx: Context, name: str) -> Scored:
    levels = [lv for lv in ctx.series[name].levels if lv.itl_mean_ms is not None]
    if not levels:
        return Scored(None, f"{name}: no ITL", {})
    best = min(levels, key=lambda lv: lv.itl_mean_ms or math.inf)
    assert best.itl_mean_ms is not None
    others = ", ".join(
        f"{lv.itl_mean_ms:.2f} ms at {lv.key}"
        for lv in levels
        if lv.key in ctx.low_levels[1:4] and lv is not best
    )
    ttft = f"{best.ttft_mean_ms:.1f} ms" if best.ttft_mean_ms is not None else "n/a"
    text = (
        f"{name}: ITL mean {best.itl_mean_ms:.2f} ms at {best.key} (TTFT mean {ttft})"
        + (f"; {others}" if others else "")
    )
    return Scored(
        (-best.itl_mean_ms,), text, {"itl_ms": best.itl_mean_ms, "ttft_ms": best.ttft_mean_ms}
    )


def score_most_users(ctx: Context, name: str) -> Scored:
    stat = ctx.slo.slo.statistic
    row = ctx.slo.capacity_of(stat, name)
    if row is None or row.users is None:
        return Scored((0.0,), f"{name}: meets the SLOs ({stat}) at no level", {"users": 0})
    other = "mean" if stat == "p90" else "p90"
    alt = ctx.slo.capacity_of(other, name)
    alt_text = (
        f"; on the {other} {alt.users} users (C_max {alt.c_max})" if alt and alt.users else ""
    )
    text = (
        f"{name}: {row.users} users ({stat}, C_max {row.c_max}, L_mean "
        f"{row.latency_mean_s:.2f} s, think time {ctx.slo.slo.think_time_s:g} s){alt_text}"
    )
    return Scored((float(row.users), float(row.c_max or 0)), text, {"users": row.users})


SCENARIOS: dict[str, tuple[str, Callable[[Context, str], Scored]]] = {
    "interactive_low_load": ("Interactive chat at low load", score_interactive),
    "high_load": ("Serving at high load", score_high_load),
    "max_throughput": ("Maximum total throughput", score_max_throughput),
    "min_itl": ("Minimal inter-token latency (real time)", score_min_itl),
    "most_users": ("Most users within SLO", score_most_users),
}


def recommend(ctx: Context, reference: dict[str, str] | None = None) -> list[Recommendation]:
    """One recommendation per scenario, plus the long-context caveat."""
    out = [
        _recommend_one(ctx, key, title, fn, (reference or {}).get(key))
        for key, (title, fn) in SCENARIOS.items()
    ]
    out.append(
        Recommendation(
            scenario="long_context",
            title="Long-context workloads",
            config=None,
            reason="not measured: these runs use short fixed prompts; benchmark long prompts "
            "(1K-32K tokens) before choosing for this workload.",
        )
    )
    return out


def _recommend_one(
    ctx: Context, key: str, title: str, fn: Callable[[Context, str], Scored], ref: str | None
) -> Recommendation:
    scored = {name: fn(ctx, name) for name in ctx.series}
    ranked = sorted((s.score, n) for n, s in scored.items() if s.score is not None)[::-1]
    title = _title(title, key, ctx)
    if not ranked:
        return Recommendation(scenario=key, title=title, config=None, reason="no data")
    best, second = ranked[0][1], (ranked[1][1] if len(ranked) > 1 else None)
    rec = Recommendation(
        scenario=key,
        title=title,
        config=best,
        reason=scored[best].text,
        numbers=scored[best].numbers,
        runner_up=second,
        runner_up_reason=scored[second].text if second else None,
    )
    if second is not None and key in _VERSUS:
        rec.reason += _VERSUS[key](ctx, best, second)
    if ref is not None:
        rec.reference = ref
        if ref == best:
            rec.reference_note = f"agrees with the reference choice ({ref})."
        elif ref in scored:
            rec.reference_note = (
                f"the reference chose {ref}: {scored[ref].text}; computed choice "
                f"{scored[best].text}."
            )
        else:
            rec.reference_note = f"the reference chose {ref}, which is not among these runs."
    return rec


def _versus_interactive(ctx: Context, best: str, second: str) -> str:
    ratios = []
    for c in ctx.low_levels:
        a, b = ctx.series[best].at(c), ctx.series[second].at(c)
        if a and b and a.tps_mean and b.tps_mean:
            ratios.append(a.tps_mean / b.tps_mean)
    if not ratios:
        return ""
    return f"; {min(ratios):.2f}-{max(ratios):.2f}x the TPS per user of {second}"


def _versus_throughput(ctx: Context, best: str, second: str) -> str:
    a, b = ctx.aggregates[best].peak_tok_s, ctx.aggregates[second].peak_tok_s
    if not a or not b:
        return ""
    return f"; {second} peaks {100 * (1 - b / a):.1f}% lower ({b:.0f} tok/s)"


_VERSUS: dict[str, Callable[[Context, str, str], str]] = {
    "interactive_low_load": _versus_interactive,
    "max_throughput": _versus_throughput,
}


def _title(title: str, key: str, ctx: Context) -> str:
    if key == "interactive_low_load" and ctx.low_levels:
        return f"{title} ({bound_text(ctx.low_levels[-1], '<=')})"
    if key == "high_load" and ctx.high_levels:
        return f"{title} ({bound_text(ctx.high_levels[0], '>=')})"
    return title
