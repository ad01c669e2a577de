"""The comparison's charts, every value with its 95% interval as an error bar.

They exist only when the report leads with a comparison (`ReportModel.comparison`):
C1 the users difference per pair, C2 each target's users, C3 the speed-up per
level with the break-even marks, C4 and C5 each target's TTFT and TPS on the SLO statistic
per level with the SLO as a line. Drawn like the other charts (plotly in report.html,
matplotlib PNGs for report.md), so they are as offline as the rest of the report.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from servecap.report.chart_data import Chart, Trace
from servecap.report.comparison import ComparisonSection, Interval, LevelPoint
from servecap.report.model import ChartInfo

if TYPE_CHECKING:
    from servecap.report.model import ReportModel

COMPARE_CHARTS: tuple[ChartInfo, ...] = (
    ChartInfo(
        id="C1", slug="users-delta", title="Users difference per pair (B - A), 95% interval",
        caption="Users the second target holds more than the first under the SLOs; a bar "
        "whose interval crosses 0 is no significant difference.",
    ),
    ChartInfo(
        id="C2", slug="users-intervals", title="Users per target, 95% intervals",
        caption="Users by Little's law at each target's C_max; the error bars are their "
        "intervals (C_max's ends: the levels passing or failing on their bootstrap "
        "intervals, with the mean latency's bounds). C_max is in the sentences above.",
    ),
    ChartInfo(
        id="C3", slug="speedup-intervals", title="Speed-up per level (TPS ratio B / A), 95% "
        "interval", caption="Mean TPS per user of the second target over the first; 1.0 is "
        "break-even, marked where the ratio crosses it.",
    ),
    ChartInfo(
        id="C4", slug="ttft-intervals", title="TTFT on the SLO statistic (ms), 95% intervals",
        caption="Each target's TTFT per level; the dotted line is the TTFT SLO.",
    ),
    ChartInfo(
        id="C5", slug="tps-intervals", title="TPS on the SLO statistic (tok/s), 95% intervals",
        caption="Each target's TPS per user per level (P90: the low tail); the dotted line "
        "is the TPS SLO.",
    ),
)


def _info(chart_id: str) -> ChartInfo:
    return next(c for c in COMPARE_CHARTS if c.id == chart_id)


def _value(v: Interval | None) -> tuple[float | None, float | None, float | None]:
    if v is None:
        return None, None, None
    return v.estimate, v.low, v.high


def _bar(name: str, xs: list[str], values: list[Interval | None], color: int) -> Trace:
    est, low, high = zip(*(_value(v) for v in values), strict=True) if values else ((), (), ())
    return Trace(name=name, kind="bar", x=list(xs), y=list(est), low=list(low),
                 high=list(high), color_index=color)


def _line(name: str, points: list[LevelPoint], color: int) -> Trace:
    return Trace(
        name=name, x=[p.level for p in points], y=[p.value.estimate for p in points],
        low=[p.value.low for p in points], high=[p.value.high for p in points],
        color_index=color,
    )


def users_delta_chart(section: ComparisonSection) -> Chart:
    xs = [f"{p.b} - {p.a}" for p in section.pairs]
    trace = _bar("users difference", xs, [p.users_difference for p in section.pairs], 0)
    return Chart(info=_info("C1"), kind="bars", x_title="pair", y_title="users (B - A)",
                 log_x=False, traces=[trace], hline=0.0)


def capacity_chart(section: ComparisonSection) -> Chart:
    caps = {c.name: c for p in section.pairs for c in p.capacity}  # one entry per target
    names = list(caps)
    traces = [_bar("users", names, [caps[n].users for n in names], 1)]
    return Chart(info=_info("C2"), kind="bars", x_title="target", y_title="users",
                 log_x=False, traces=traces)


def speedup_chart(section: ComparisonSection, axis: str) -> Chart:
    traces, marks = [], []
    for i, pair in enumerate(section.pairs):
        traces.append(_line(f"{pair.b} / {pair.a}", pair.speedups, i))
        even = pair.break_even
        if even is not None and even.estimate is not None:
            ends = "" if even.low is None else f" ({even.low:.1f}..{even.high:.1f})"
            marks.append((even.estimate, f"break-even {pair.b} ~{even.estimate:.1f}{ends}"))
    return Chart(info=_info("C3"), x_title=axis, y_title="TPS ratio B / A", traces=traces,
                 hline=1.0, marks=marks)


def metric_chart(section: ComparisonSection, chart_id: str, metric: str, axis: str) -> Chart:
    stat = "P90" if section.statistic == "p90" else "mean"
    slo = section.slo.ttft_ms if metric == "ttft_ms" else section.slo.tps
    traces = [
        _line(name, per_metric.get(metric, []), i)
        for i, (name, per_metric) in enumerate(section.series.items())
    ]
    unit = "ms" if metric == "ttft_ms" else "tok/s"
    return Chart(info=_info(chart_id), x_title=axis, y_title=f"{stat} ({unit})",
                 traces=traces, hline=slo)


def comparison_charts(model: ReportModel) -> list[Chart]:
    """The five charts, or none when the report has no comparison."""
    if model.comparison is None:
        return []
    return section_charts(model.comparison, model.analysis.level_kind.axis_title)


def section_charts(section: ComparisonSection, axis: str = "concurrency (c)") -> list[Chart]:
    """The five charts of a comparison section (also drawn by the app's Compare page)."""
    return [
        users_delta_chart(section), capacity_chart(section), speedup_chart(section, axis),
        metric_chart(section, "C4", "ttft_ms", axis), metric_chart(section, "C5", "tps", axis),
    ]
