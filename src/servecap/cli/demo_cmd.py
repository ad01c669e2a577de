"""`servecap demo`: the whole main job against the built-in simulator, no server needed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from servecap.cli.common import user_errors
from servecap.cli.run_cmd import RichProgress
from servecap.cli.tables import capacity_table
from servecap.core.config import parse_levels


@user_errors
def demo(
    out: Annotated[Path, typer.Option(help="Where runs and the report go")] = Path(
        "demo-output"
    ),
    rounds: Annotated[int, typer.Option(min=1, help="Requests per level = rounds x c")] = 3,
    concurrency: Annotated[str, typer.Option(help="Levels")] = "1,2,4,8,16,32,64",
    time_scale: Annotated[
        float, typer.Option(min=0.1, max=100.0, help="Simulate this many times real time")
    ] = 1.0,
) -> None:
    """Simulate the seed report's four deployments, sweep each, and write the report."""
    from servecap.api.demo import run_demo

    levels = tuple(parse_levels(concurrency))
    console = Console(stderr=True)

    def progress_for(profile: str) -> RichProgress:
        console.rule(f"simulated deployment: {profile}")
        return RichProgress(console)

    result = run_demo(out, rounds, levels, time_scale, progress_for=progress_for)
    stdout = Console()
    for run in result.plan.runs:
        stdout.print(capacity_table(run, result.plan.slo.statistic))
    print(f"runs: {out / 'runs'}")
    if result.report_html:
        print(f"report: {result.report_html}")
