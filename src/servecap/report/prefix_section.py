"""The report's prefix-cache tables (in "the server's view"): per run that recorded any, the
hit rate built for, served by usage and by /metrics, and the reset before each level
(`analysis.prefix_cache`, the same table `plan` prints and the app shows)."""

from __future__ import annotations

from servecap.analysis.prefix_cache import NOTE, prefix_table
from servecap.report.model import ReportModel
from servecap.report.views import Table


def prefix_tables(model: ReportModel) -> list[Table]:
    """One table per run with prefix-cache figures."""
    out: list[Table] = []
    for run in model.runs:
        table = prefix_table(run.name, run.levels)
        if table is not None:
            out.append(Table(title=table.title, header=table.header, rows=table.rows))
    return out


def prefix_note(model: ReportModel) -> str:
    """How to read the tables, said once (empty when there is none)."""
    return NOTE if prefix_tables(model) else ""
