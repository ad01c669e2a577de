"""`servecap report`: the deployment comparison report from stored runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from servecap.cli.common import (
    SLO_DEFAULTS,
    StatChoice,
    StatOption,
    ThinkTimeOption,
    TpsSloOption,
    TtftSloOption,
    slo_from_flags,
    user_errors,
)
from servecap.core.errors import UserInputError

if TYPE_CHECKING:
    from servecap.report.model import ReportOptions


def report_options(
    title: str | None, pairs: list[str], ttft_slo_ms: float, tps_slo: float,
    think_time_s: float, stat: StatChoice,
) -> ReportOptions:
    """ReportOptions from the flags; bad values raise UserInputError with one message."""
    from servecap.api.report import ReportOptions

    slo = slo_from_flags(ttft_slo_ms, tps_slo, stat, think_time_s)
    options = ReportOptions(pairs=list(pairs), slo=slo)
    if title:
        options.title = title
    return options


@user_errors
def report(
    runs: Annotated[list[Path], typer.Argument(help="Run directories or directories of runs")],
    out: Annotated[Path, typer.Option("--out", help="Directory to write the report into")],
    title: Annotated[str | None, typer.Option(help="Report title")] = None,
    pair: Annotated[
        list[str] | None, typer.Option("--pair", help="SPEC:BASE run names to compare")
    ] = None,
    ttft_slo_ms: TtftSloOption = SLO_DEFAULTS.ttft_ms,
    tps_slo: TpsSloOption = SLO_DEFAULTS.tps,
    think_time_s: ThinkTimeOption = SLO_DEFAULTS.think_time_s,
    stat: StatOption = StatChoice(SLO_DEFAULTS.statistic),
) -> None:
    """Compare runs: report.html, report.md, charts/, tables/ and results.zip in --out."""
    from servecap.api.report import build_report, write_report
    from servecap.api.runs import load_runs

    options = report_options(title, pair or [], ttft_slo_ms, tps_slo, think_time_s, stat)
    if not runs:
        raise UserInputError("no runs given: name run directories or folders of runs")
    model = build_report(load_runs(runs), options)
    paths = write_report(model, out)
    print(f"report: {paths.html}")
    print(f"markdown: {paths.markdown}")
    print(f"bundle: {paths.zip}")
