"""The charts as plain data (`chart_data`'s traces of numbers), drawn by both plotly and
matplotlib. `all_charts` adds the rate charts (`charts_rate`) and the comparison's
(`charts_compare`), which build on the same `Chart` and `Trace`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from servecap.report.chart_data import Chart, Trace
from servecap.report.charts_compare import comparison_charts
from servecap.report.charts_rate import rate_charts
from servecap.report.kind_views import kind_charts
from servecap.report.model import ChartInfo

if TYPE_CHECKING:
    from servecap.report.model import ReportModel

CHARTS: tuple[ChartInfo, ...] = (
    ChartInfo(
        id="01",
        slug="ttft",
        title="TTFT (ms), mean and P90",
        caption="Time to first token per level; dashed lines are P90.",
    ),
    ChartInfo(
        id="02",
        slug="itl",
        title="ITL (ms), mean and P90",
        caption="Inter-token latency per level; dashed lines are P90.",
    ),
    ChartInfo(
        id="03",
        slug="tps",
        title="TPS per user (tok/s), mean and P90",
        caption="Output tokens per second of one request; dashed lines are P90.",
    ),
    ChartInfo(
        id="04",
        slug="latency",
        title="Latency (s), mean and P90",
        caption="End-to-end request latency; dashed lines are P90.",
    ),
    ChartInfo(
        id="05",
        slug="throughput",
        title="System throughput (requests/s)",
        caption="Completed requests per second of the whole system.",
    ),
    ChartInfo(
        id="06",
        slug="capacity",
        title="Capacity: C_max and users (P90 and mean)",
        caption="Highest level meeting both SLOs, and users by Little's law.",
    ),
    ChartInfo(
        id="07",
        slug="aggregate-output",
        title="Aggregate output (tok/s)",
        caption="Output tokens per second of the whole system.",
    ),
    ChartInfo(
        id="08",
        slug="speedup",
        title="Speedup per pair (TPS ratio) with break-even",
        caption="Ratio of mean TPS per user; 1.0 is break-even.",
    ),
    ChartInfo(
        id="09",
        slug="slo-heatmap",
        title="SLO compliance (TTFT / TPS)",
        caption="Per config and level: both met, one met, none met.",
    ),
    ChartInfo(
        id="10",
        slug="dashboard",
        title="Dashboard (means)",
        caption="TTFT, ITL, TPS, latency, throughput and aggregate output.",
    ),
    ChartInfo(
        id="11",
        slug="input-lengths",
        title="Input lengths sent and served (tokens)",
        caption="Requests per prompt-length bin, in each run's largest level; dashed: sent.",
    ),
    ChartInfo(
        id="12",
        slug="output-lengths",
        title="Output lengths asked and served (tokens)",
        caption="Requests per output-length bin (max_tokens asked, dashed; tokens served).",
    ),
)


def _axis(model: ReportModel) -> str:
    return model.analysis.level_kind.axis_title


def _info(slug: str) -> ChartInfo:
    return next(c for c in CHARTS if c.slug == slug)


def metric_chart(
    model: ReportModel, slug: str, metric: str, unit: str, stats: tuple[str, ...]
) -> Chart:
    traces = []
    for i, run in enumerate(model.runs):
        for stat in stats:
            traces.append(
                Trace(
                    name=f"{run.name} {stat}" if len(stats) > 1 else run.name,
                    x=[lv.key.value for lv in run.levels],
                    y=[lv.value(metric, stat) for lv in run.levels],
                    dash=stat != "mean",
                    color_index=i,
                )
            )
    return Chart(info=_info(slug), x_title=_axis(model), y_title=unit, traces=traces)


def throughput_chart(model: ReportModel) -> Chart:
    traces = [
        Trace(name=name, x=[p.level.value for p in pts], y=[p.rps for p in pts], color_index=i)
        for i, (name, pts) in enumerate(model.analysis.throughput.items())
    ]
    return Chart(
        info=_info("throughput"), x_title=_axis(model), y_title="requests/s", traces=traces
    )


def aggregate_chart(model: ReportModel) -> Chart:
    traces = [
        Trace(
            name=a.config,
            x=[p.level.value for p in a.points],
            y=[p.tok_s for p in a.points],
            color_index=i,
        )
        for i, a in enumerate(model.analysis.aggregates)
    ]
    return Chart(
        info=_info("aggregate-output"), x_title=_axis(model), y_title="tok/s", traces=traces
    )


def speedup_chart(model: ReportModel) -> Chart:
    traces, marks = [], []
    for i, sp in enumerate(model.analysis.speedups):
        traces.append(
            Trace(
                name=sp.pair.label,
                x=[p.level.value for p in sp.points],
                y=[p.ratio for p in sp.points],
                color_index=i,
            )
        )
        if sp.break_even is not None:
            prefix = model.analysis.level_kind.prefix
            marks.append(
                (sp.break_even, f"break-even {sp.pair.spec} {prefix}~{sp.break_even:.1f}")
            )
    return Chart(
        info=_info("speedup"), x_title=_axis(model), y_title="spec TPS / base TPS",
        traces=traces, hline=1.0, marks=marks,
    )


def capacity_chart(model: ReportModel) -> Chart:
    traces = []
    cap = model.analysis.slo.capacity
    for i, (stat, what) in enumerate((s, w) for s in ("p90", "mean") for w in ("c_max", "users")):
        rows = cap[stat]
        traces.append(
            Trace(
                name=f"{'C_max' if what == 'c_max' else 'users'} ({stat})",
                kind="bar",
                x=[r.config for r in rows],
                y=[float(getattr(r, what)) if getattr(r, what) is not None else 0.0 for r in rows],
                color_index=i,
                dash=stat == "mean",
            )
        )
    return Chart(
        info=_info("capacity"),
        kind="bars",
        x_title="config",
        log_x=False,
        y_title="C_max / users",
        traces=traces,
    )


def heatmap_chart(model: ReportModel) -> Chart:
    stat = model.options.slo.statistic
    levels = model.analysis.levels
    z, text = [], []
    for name in model.configs:
        cells = {c.level: c for c in model.analysis.slo.cells(stat, name)}
        z.append(
            [float(cells[c].ttft_ok + cells[c].tps_ok) if c in cells else -1.0 for c in levels]
        )
        text.append([cells[c].marks if c in cells else "" for c in levels])
    return Chart(
        info=_info("slo-heatmap"),
        kind="heatmap",
        log_x=False,
        z=z,
        z_text=text,
        rows=model.configs,
        cols=[str(c) for c in levels],
        y_title=f"config ({stat.upper() if stat == 'p90' else 'mean'}: TTFT, TPS)",
    )


def dashboard_chart(model: ReportModel) -> Chart:
    panels = [
        metric_chart(model, "ttft", "ttft", "TTFT mean (ms)", ("mean",)),
        metric_chart(model, "itl", "itl", "ITL mean (ms)", ("mean",)),
        metric_chart(model, "tps", "tps", "TPS mean (tok/s)", ("mean",)),
        metric_chart(model, "latency", "latency", "latency mean (s)", ("mean",)),
        throughput_chart(model).model_copy(update={"y_title": "system throughput (req/s)"}),
        aggregate_chart(model).model_copy(update={"y_title": "aggregate output (tok/s)"}),
    ]
    return Chart(info=_info("dashboard"), kind="grid", panels=panels)


def lengths_chart(model: ReportModel, dimension: str) -> Chart:
    """Histogram of one run's lengths (its largest level), sent dashed, served solid."""
    traces = []
    for i, run in enumerate(model.runs):
        levels = [lv for lv in run.levels if dimension in lv.length_histograms]
        if not levels:
            continue
        level = max(levels, key=lambda lv: lv.n_requests or 0)
        hist = level.length_histograms[dimension]
        edges = hist["edges"]
        centres: list[float | int | str] = [
            (a + b) / 2 for a, b in zip(edges, edges[1:], strict=False)
        ]
        for series in ("sent", "served"):
            traces.append(
                Trace(
                    name=f"{run.name} {level.key} {series}",
                    x=centres,
                    y=[float(v) for v in hist[series]],
                    dash=series == "sent",
                    color_index=i,
                )
            )
    slug = "input-lengths" if dimension == "input" else "output-lengths"
    return Chart(
        info=_info(slug), x_title="tokens", y_title="requests", log_x=False, traces=traces
    )


def all_charts(model: ReportModel) -> list[Chart]:
    """The charts in order, then the rate charts when a run has open-loop levels."""
    both = ("mean", "p90")
    return [
        metric_chart(model, "ttft", "ttft", "ms", both),
        metric_chart(model, "itl", "itl", "ms", both),
        metric_chart(model, "tps", "tps", "tok/s", both),
        metric_chart(model, "latency", "latency", "s", both),
        throughput_chart(model),
        capacity_chart(model),
        aggregate_chart(model),
        speedup_chart(model),
        heatmap_chart(model),
        dashboard_chart(model),
        lengths_chart(model, "input"),
        lengths_chart(model, "output"),
        *rate_charts(model),
        *kind_charts(model),
        *comparison_charts(model),
    ]
