"""`servecap plan`, `servecap show` and `servecap import-summary`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console

from servecap.api.imports import import_table
from servecap.api.plan import plan_runs
from servecap.cli.common import fail_input, user_errors
from servecap.cli.tables import capacity_table, levels_table
from servecap.core.config import SLO
from servecap.storage.runs import load_runs, run_to_json


@user_errors
def plan(
    runs: Annotated[list[Path], typer.Argument(help="Run directories or directories of runs")],
    ttft_slo_ms: Annotated[float, typer.Option(help="TTFT objective, ms")] = 1000.0,
    tps_slo: Annotated[float, typer.Option(help="Per-user TPS objective, tok/s")] = 15.0,
    stat: Annotated[str, typer.Option(help="p90 (tail) or mean")] = "p90",
    think_time_s: Annotated[float, typer.Option(help="User think time, s")] = 45.0,
    format: Annotated[str, typer.Option(help="table or json")] = "table",
) -> None:
    """SLO matrix, C_max and users (Little's law) for each run."""
    if format not in ("table", "json"):
        raise fail_input(f"invalid --format {format!r}: use table or json")
    try:
        slo = SLO(ttft_ms=ttft_slo_ms, tps=tps_slo, statistic=stat, think_time_s=think_time_s)  # type: ignore[arg-type]
    except ValidationError as exc:
        problem = exc.errors()[0]
        raise fail_input(f"invalid {problem['loc'][0]}: {problem['msg']}") from None
    report = plan_runs(load_runs(runs), slo)
    if format == "json":
        print(report.model_dump_json(indent=2, include={"runs"}))
        return
    console = Console()
    for item in report.runs:
        console.print(capacity_table(item, stat))


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
        console.print(
            f"[bold]{info.name}[/] ({info.source}, {info.status}) created {info.created_at}",
            highlight=False,
        )
        if info.time_scale:
            console.print(f"simulator time scale: x{info.time_scale:g}")
        console.print(levels_table(str(item.path), item.levels))


@user_errors
def import_summary(
    file: Annotated[Path, typer.Argument(help="CSV with a config column, one row per level")],
    out: Annotated[Path, typer.Option(help="Directory to write the runs into")] = Path(
        "results"
    ),
) -> None:
    """Import a published per-level table (Appendix A layout) as summary-only runs."""
    for run_dir in import_table(file, out):
        print(run_dir)
