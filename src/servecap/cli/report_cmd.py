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
from servecap.core.text import printable

if TYPE_CHECKING:
    from servecap.analysis.capacity_delta import Headline
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
    compare: Annotated[bool, typer.Option(
        "--compare", help="Require the runs to be comparable (same workload)")] = False,
) -> None:
    """Compare runs: report.html, report.md, charts/, tables/ and results.zip in --out."""
    from servecap.api.compare_report import comparison_headlines
    from servecap.api.report import build_report, write_report
    from servecap.api.runs import load_runs

    options = report_options(title, pair or [], ttft_slo_ms, tps_slo, think_time_s, stat)
    if not runs:
        raise UserInputError("no runs given: name run directories or folders of runs")
    loaded = load_runs(runs)
    heads = comparison_headlines(runs, loaded, options.slo, require=compare)
    model = build_report(loaded, options)
    paths = write_report(model, out)
    if heads:
        _lead_with(heads, out, paths.markdown)
    print(f"report: {paths.html}")
    print(f"markdown: {paths.markdown}")
    print(f"bundle: {paths.zip}")


def _lead_with(heads: list[Headline], out: Path, markdown: Path) -> None:
    """Print the comparison headline first and put it at the top of report.md."""
    from servecap.api.compare_report import COMPARISON_MD, headline_markdown

    text = headline_markdown(heads)
    for head in heads:
        print(printable(f"{head.b.name} vs {head.a.name}:"))
        for line in head.sentences:
            print(f"  {printable(line)}")
    (out / COMPARISON_MD).write_text(text, encoding="utf-8")
    markdown.write_text(text + "\n" + markdown.read_text(encoding="utf-8"), encoding="utf-8")
    print(f"comparison: {out / COMPARISON_MD}")
