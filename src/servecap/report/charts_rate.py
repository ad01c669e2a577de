"""The open-loop charts: latency and TTFT against offered rate, achieved against offered
rate, and goodput. They exist only when a compared run has open-loop (rate) levels.

TTFT and latency here are measured from each request's target time (`ttft_sched`,
`latency_sched`): what a user arriving at that rate waits, client and cap delays included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from servecap.kinds.registry import kind_of
from servecap.report.chart_data import Chart, Trace
from servecap.report.model import ChartInfo

if TYPE_CHECKING:
    from servecap.core.summary import LevelSummary
    from servecap.report.model import ReportModel, RunMeta

RATE_AXIS = "offered rate (requests/s)"

RATE_CHARTS: tuple[ChartInfo, ...] = (
    ChartInfo(
        id="13", slug="rate-ttft", title="TTFT from arrival (ms) against offered rate",
        caption="Time to first token from each request's target time; dashed lines are P90.",
    ),
    ChartInfo(
        id="14", slug="rate-latency", title="Latency from arrival (s) against offered rate",
        caption="End-to-end latency from each request's target time; dashed lines are P90.",
    ),
    ChartInfo(
        id="15", slug="rate-achieved", title="Achieved against offered rate (requests/s)",
        caption="Successful completions per second in the window; the dashed 'offered' line "
        "is achieved = offered, and a run that falls below it has passed its capacity.",
    ),
    ChartInfo(
        id="16", slug="rate-goodput", title="Goodput (requests/s meeting every SLO)",
        caption="Offered rate times the share of requests that met the TTFT and TPS SLOs "
        "(DistServe's goodput); the dashed 'offered' line is the offered rate.",
    ),
)


def _open_levels(run: RunMeta) -> list[LevelSummary]:
    return [lv for lv in run.levels if kind_of(lv.key).offered_rate(lv.key) is not None]


def has_rate_levels(runs: list[RunMeta]) -> bool:
    return any(_open_levels(run) for run in runs)


def _info(slug: str) -> ChartInfo:
    return next(c for c in RATE_CHARTS if c.slug == slug)


def _chart(slug: str, y_title: str, traces: list[Trace]) -> Chart:
    return Chart(info=_info(slug), x_title=RATE_AXIS, y_title=y_title, traces=traces)


def _metric(model: ReportModel, slug: str, metric: str, unit: str) -> Chart:
    traces = []
    for i, run in enumerate(model.runs):
        levels = _open_levels(run)
        for stat in ("mean", "p90"):
            traces.append(Trace(
                name=f"{run.name} {stat}", x=[lv.key.value for lv in levels],
                y=[lv.value(metric, stat) for lv in levels], dash=stat != "mean", color_index=i,
            ))
    return _chart(slug, unit, traces)


def _offered_line(model: ReportModel) -> Trace:
    rates = sorted({lv.key.value for run in model.runs for lv in _open_levels(run)})
    return Trace(name="offered", x=list(rates), y=[float(r) for r in rates], dash=True,
                 color_index=-1)


def _achieved(model: ReportModel) -> Chart:
    traces = [_offered_line(model)]
    for i, run in enumerate(model.runs):
        levels = _open_levels(run)
        traces.append(Trace(name=run.name, x=[lv.key.value for lv in levels],
                            y=[lv.achieved_rps for lv in levels], color_index=i))
    return _chart("rate-achieved", "achieved requests/s", traces)


def _goodput(model: ReportModel) -> Chart:
    traces = [_offered_line(model)]
    for i, run in enumerate(model.runs):
        levels = _open_levels(run)
        good = model.goodput.get(run.name, {})
        traces.append(Trace(name=run.name, x=[lv.key.value for lv in levels],
                            y=[good.get(str(lv.key)) for lv in levels], color_index=i))
    return _chart("rate-goodput", "goodput requests/s", traces)


def rate_charts(model: ReportModel) -> list[Chart]:
    """The four rate charts, or none when no run has rate levels."""
    if not has_rate_levels(model.runs):
        return []
    return [
        _metric(model, "rate-ttft", "ttft_sched", "ms"),
        _metric(model, "rate-latency", "latency_sched", "s"),
        _achieved(model),
        _goodput(model),
    ]
