"""What a level's kind shows of its own (`LoadKind.tables`, `LoadKind.series`), as the
report's tables and charts: a new kind's views reach the HTML, the Markdown and the app
without an edit here."""

from __future__ import annotations

from collections.abc import Iterator

from servecap.core.config import SLO
from servecap.kinds.base import KindSeries
from servecap.kinds.registry import kind_of
from servecap.report.chart_data import Chart, Trace
from servecap.report.model import ChartInfo, ReportModel, RunMeta
from servecap.report.views import Table


def _series(runs: list[RunMeta]) -> Iterator[tuple[str, RunMeta, KindSeries]]:
    """Each run's kind series in order, with the chart id it is drawn under (K1, K2, ...)."""
    n = 0
    for run in runs:
        for level in run.levels:
            for series in kind_of(level.key).series(level):
                n += 1
                yield f"K{n}", run, series


def kind_chart_infos(runs: list[RunMeta]) -> list[ChartInfo]:
    return [
        ChartInfo(id=chart_id, slug=f"kind-{chart_id.lower()}-{series.slug}",
                  title=f"{run.name}: {series.title}", caption=series.caption)
        for chart_id, run, series in _series(runs)
    ]


def kind_charts(model: ReportModel) -> list[Chart]:
    infos = {info.id: info for info in model.charts}
    charts = []
    for chart_id, _run, series in _series(model.runs):
        traces = [
            Trace(name=name, x=list(xs), y=list(ys), color_index=i)
            for i, (name, (xs, ys)) in enumerate(series.lines.items())
        ]
        charts.append(Chart(info=infos[chart_id], x_title=series.x_title,
                            y_title=series.y_title, log_x=False, traces=traces))
    return charts


def kind_tables(runs: list[RunMeta], slo: SLO) -> list[Table]:
    return [
        Table(title=f"{run.name} {level.key}: {table.title}"
              + (f"; {table.note}" if table.note else ""),
              header=table.header, rows=table.rows)
        for run in runs for level in run.levels for table in kind_of(level.key).tables(level, slo)
    ]


def kind_chart_ids(model: ReportModel) -> list[str]:
    """The ids of the kinds' charts, in the report's order."""
    return [info.id for info in model.charts if info.id.startswith("K")]
