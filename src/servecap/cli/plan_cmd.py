"""`servecap plan`, `servecap show` and `servecap import` (alias `import-summary`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from servecap.api.stored.imports import import_files
from servecap.api.stored.plan import plan_runs
from servecap.api.stored.runs import load_runs, run_to_json, status_text
from servecap.cli.common import (
    SLO_DEFAULTS,
    StatChoice,
    StatOption,
    TaskTimeOption,
    ThinkTimeOption,
    TpsSloOption,
    TtftSloOption,
    fail_input,
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
from servecap.cli.tables import levels_table, print_plan, print_table
from servecap.core.text import printable


@user_errors
def plan(
    runs: Annotated[list[Path], typer.Argument(help="Run directories or directories of runs")],
    ttft_slo_ms: TtftSloOption = SLO_DEFAULTS.ttft_ms,
    tps_slo: TpsSloOption = SLO_DEFAULTS.tps,
    stat: StatOption = StatChoice(SLO_DEFAULTS.statistic),
    think_time_s: ThinkTimeOption = SLO_DEFAULTS.think_time_s,
    task_time_slo_s: TaskTimeOption = SLO_DEFAULTS.task_time_s,
    format: Annotated[str, typer.Option(help="table or json")] = "table",
    include_partial: Annotated[
        bool, typer.Option(help="Let levels a stopped run did not finish count for C_max")
    ] = False,
    gpus: GpusOption = None,
    gpu_hour_cost: GpuHourCostOption = None,
    currency: CurrencyOption = None,
) -> None:
    """SLO matrix, C_max and users (Little's law) for each run; with GPUs and their price
    (flags, or stored with the run), the cost at C_max, the verified users and peak; a run
    with agents levels adds the agents it holds within --task-time-slo-s."""
    if format not in ("table", "json"):
        raise fail_input(f"invalid --format {format!r}: use table or json")
    slo = slo_from_flags(ttft_slo_ms, tps_slo, stat, think_time_s, task_time_slo_s)
    cost = cost_fields(gpus, gpu_hour_cost, currency)
    report = plan_runs(load_runs(runs), slo, include_partial, cost)
    if format == "json":
        print(report.model_dump_json(indent=2, include={"runs"}))
        return
    print_plan(Console(), report)


@user_errors
def show(
    run: Annotated[Path, typer.Argument(help="A run directory (or a directory of runs)")],
    format: Annotated[str, typer.Option(help="table or json")] = "table",
) -> None:
    """Print a stored run: its metadata and per-level table."""
    if format not in ("table", "json"):
        raise fail_input(f"invalid --format {format!r}: use table or json")
    console = Console()
    for item in load_runs([run]):
        if format == "json":
            print(run_to_json(item))
            continue
        info = item.info
        name = escape(printable(info.name))  # server text: never markup, never a control
        console.print(
            f"[bold]{name}[/] ({info.source}, {escape(printable(status_text(item)))}) "
            f"created {escape(printable(info.created_at))}",
            highlight=False,
        )
        if info.time_scale:
            console.print(f"simulator time scale: x{info.time_scale:g}")
        for note in info.notes:
            console.print(f"note: {printable(note)}", markup=False, highlight=False)
        print_table(console, levels_table(str(item.path), item.levels))


@user_errors
def import_runs(
    files: Annotated[list[Path], typer.Argument(
        help="Result files (or a folder of Benchmark Report partials): AIPerf "
        "profile_export_aiperf.json, GuideLLM benchmarks.json, SGLang bench_serving JSONL, "
        "vllm bench serve --save-result JSON, "
        "Benchmark Report v0.2.1, or the seed's Appendix A CSV")],
    out: Annotated[
        Path, typer.Option(parser=out_dir, help="Directory to write the runs into")] = Path(
        "results"
    ),
) -> None:
    """Import other tools' results as runs to plan, report and compare (format detected).

    Per-request data is kept and servecap computes its own statistics; aggregates become a summary-only run; what could not be mapped is listed in the run and its report. Files of one format given together become one run (AIPerf writes one file per level).
    """  # noqa: E501 (one paragraph: the help keeps a docstring's line breaks)
    for run_dir in import_files(files, out):
        print(run_dir)
