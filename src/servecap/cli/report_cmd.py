"""`servecap report`: the deployment comparison report from stored runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError

from servecap.cli.common import user_errors
from servecap.core.errors import UserInputError

if TYPE_CHECKING:
    from servecap.report.model import ReportOptions


def report_options(
    title: str | None, pairs: list[str], ttft_slo_ms: float, tps_slo: float,
    think_time_s: float, stat: str,
) -> ReportOptions:
    """ReportOptions from the flags; bad values raise UserInputError with one message."""
    from servecap.api.report import ReportOptions
    from servecap.core.config import SLO

    if stat not in ("p90", "mean"):
        raise UserInputError(f"invalid --stat {stat!r}: use p90 or mean")
    try:
        slo = SLO(ttft_ms=ttft_slo_ms, tps=tps_slo, statistic=stat,  # type: ignore[arg-type]
                  think_time_s=think_time_s)
    except ValidationError as exc:
        problem = exc.errors()[0]
        raise UserInputError(f"invalid {problem['loc'][0]}: {problem['msg']}") from None
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
    ttft_slo_ms: Annotated[float, typer.Option(help="TTFT objective, ms")] = 1000.0,
    tps_slo: Annotated[float, typer.Option(help="Per-user TPS objective, tok/s")] = 15.0,
    think_time_s: Annotated[float, typer.Option(help="User think time, s")] = 45.0,
    stat: Annotated[str, typer.Option(help="p90 (tail) or mean")] = "p90",
) -> None:
    """Compare runs: report.html, report.md, charts/, tables/ and results.zip in --out."""
    from servecap.api.report import build_report, write_report
    from servecap.storage.runs import load_runs

    options = report_options(title, pair or [], ttft_slo_ms, tps_slo, think_time_s, stat)
    if not runs:
        raise UserInputError("no runs given: name run directories or folders of runs")
    model = build_report(load_runs(runs), options)
    paths = write_report(model, out)
    print(f"report: {paths.html}")
    print(f"markdown: {paths.markdown}")
    print(f"bundle: {paths.zip}")
