"""`servecap report`: the deployment comparison report from stored runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from servecap.cli.common import (
    SLO_DEFAULTS,
    StatChoice,
    StatOption,
    TaskTimeOption,
    ThinkTimeOption,
    TpsSloOption,
    TtftSloOption,
    out_dir,
    slo_from_flags,
    user_errors,
)
from servecap.cli.cost_flags import (
    CurrencyOption,
    GpuHourCostOption,
    GpusOption,
    cost_fields,
)
from servecap.core.cost import CostFields
from servecap.core.errors import UserInputError
from servecap.core.text import printable

if TYPE_CHECKING:
    from servecap.report.comparison import ComparisonSection
    from servecap.report.model import ReportOptions

PREDICT_HELP = (
    "A calibrated simulator profile (built-in name or .toml): its prediction of each run's "
    "levels, at the run's lengths, beside the measurement (section 12)"
)


def report_options(
    title: str | None, pairs: list[str], ttft_slo_ms: float, tps_slo: float,
    think_time_s: float, stat: StatChoice, cost: CostFields | None = None,
    task_time_s: float = SLO_DEFAULTS.task_time_s,
) -> ReportOptions:
    """ReportOptions from the flags; bad values raise UserInputError with one message."""
    from servecap.api.stored.report import ReportOptions

    slo = slo_from_flags(ttft_slo_ms, tps_slo, stat, think_time_s, task_time_s)
    options = ReportOptions(pairs=list(pairs), slo=slo, cost=cost or CostFields())
    if title:
        options.title = title
    return options


@user_errors
def report(
    runs: Annotated[list[Path], typer.Argument(help="Run directories or directories of runs")],
    out: Annotated[Path, typer.Option(
        "--out", parser=out_dir, help="Directory to write the report into")],
    title: Annotated[str | None, typer.Option(help="Report title")] = None,
    pair: Annotated[
        list[str] | None, typer.Option("--pair", help="SPEC:BASE run names to compare")
    ] = None,
    ttft_slo_ms: TtftSloOption = SLO_DEFAULTS.ttft_ms,
    tps_slo: TpsSloOption = SLO_DEFAULTS.tps,
    think_time_s: ThinkTimeOption = SLO_DEFAULTS.think_time_s,
    stat: StatOption = StatChoice(SLO_DEFAULTS.statistic),
    task_time_slo_s: TaskTimeOption = SLO_DEFAULTS.task_time_s,
    compare: Annotated[bool, typer.Option(
        "--compare", help="Require the runs to be comparable (same workload)")] = False,
    predict: Annotated[str | None, typer.Option("--predict", help=PREDICT_HELP)] = None,
    gpus: GpusOption = None,
    gpu_hour_cost: GpuHourCostOption = None,
    currency: CurrencyOption = None,
) -> None:
    """Compare runs: report.html, report.md, charts/, tables/ and results.zip in --out.

    With GPUs and their price (flags, or stored with each run) the capacity section adds
    the cost at C_max, at the verified users and at peak throughput; runs with agents
    levels open with the agents they hold within --task-time-slo-s."""
    from servecap.api.comparison.report import compared_report, report_runs
    from servecap.api.stored.report import write_report

    cost = cost_fields(gpus, gpu_hour_cost, currency)
    options = report_options(title, pair or [], ttft_slo_ms, tps_slo, think_time_s, stat, cost,
                             task_time_slo_s)
    profile = None
    if predict is not None:
        from servecap.api.predict.predict import predicting_profile

        profile = predicting_profile(predict, what="--predict")
    if not runs:
        raise UserInputError("no runs given: name run directories or folders of runs")
    loaded = report_runs(runs)
    model, section = compared_report(runs, loaded, options, require=compare)
    if profile is not None:
        from servecap.api.predict.predict_beside import with_predictions

        model = with_predictions(model, profile)
    paths = write_report(model, out)
    _decision_first(model.headline)
    if section is not None:
        _lead_with(section, out)
    print(f"report: {paths.html}")
    print(f"markdown: {paths.markdown}")
    print(f"bundle: {paths.zip}")


def _decision_first(headline: dict[str, list[str]]) -> None:
    """Print the decision on the report's own statistic first, as report.html and report.md
    open with it: the deployment, its users (predicted, verified), C_max and the SLOs."""
    for lines in list(headline.values())[:1]:
        for line in lines:
            print(printable(line))


def _lead_with(section: ComparisonSection, out: Path) -> None:
    """Print the comparison after the decision (report.md and report.html follow it so)."""
    from servecap.api.comparison.report import write_comparison_md

    for pair in section.pairs:
        print(printable(f"{pair.b} vs {pair.a}:"))
        for line in pair.lines:
            print(f"  {printable(line.text + line.note())}")
    print(f"comparison: {write_comparison_md(section, out)}")
