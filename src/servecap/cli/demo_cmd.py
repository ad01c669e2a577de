"""`servecap demo`: the whole main job against the built-in simulator, no server needed."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from servecap.cli.common import user_errors
from servecap.cli.tables import print_plan
from servecap.core.config import parse_levels
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary


class DemoProgress:
    """One live display for all the side-by-side sweeps: a bar per deployment."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.bars = Progress(
            TextColumn("{task.fields[profile]:<14}"), TextColumn("{task.description:>5}"),
            BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console,
        )

    def sink(self, profile: str) -> _ProfileBar:
        task = self.bars.add_task("start", total=None, profile=profile)
        return _ProfileBar(self, task, profile)

    def __enter__(self) -> DemoProgress:
        self.bars.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bars.stop()


class _ProfileBar:
    """One deployment's sweep, drawn as a task of the shared display."""

    def __init__(self, owner: DemoProgress, task: object, profile: str) -> None:
        self.bars, self.task, self.profile = owner.bars, task, profile

    def started(self, total_requests: int, run_dir: str, model: str) -> None:
        self.bars.update(self.task, total=total_requests)  # type: ignore[arg-type]

    def level_started(self, level: LevelKey, n_requests: int) -> None:
        self.bars.update(self.task, description=str(level))  # type: ignore[arg-type]

    def request_done(self, record: RequestRecord) -> None:
        self.bars.update(self.task, advance=1)  # type: ignore[arg-type]

    def level_done(self, summary: LevelSummary) -> None:
        bound = ", client-bound" if summary.client_bound else ""
        self.bars.console.print(
            f"{self.profile} {summary.key}: {summary.n_ok} ok, {summary.n_failed} "
            f"failed, TTFT P90 {summary.ttft_p90_ms or 0:.1f} ms, TPS P90 "
            f"{summary.tps_p90 or 0:.1f}{bound}",
            highlight=False, markup=False,
        )


@user_errors
def demo(
    out: Annotated[Path, typer.Option(help="Where runs and the report go")] = Path(
        "demo-output"
    ),
    rounds: Annotated[int, typer.Option(min=1, help="Requests per level = rounds x c")] = 10,
    concurrency: Annotated[str, typer.Option(help="Levels")] = "1,2,4,8,16,32,64",
    time_scale: Annotated[
        float, typer.Option(min=0.1, max=100.0, help="Simulate this many times real time")
    ] = 1.0,
) -> None:
    """Simulate the seed report's four deployments side by side, sweep each, and report."""
    from servecap.api.demo import SEED_PROFILES, run_demo

    levels = tuple(parse_levels(concurrency))
    console = Console(stderr=True)
    console.print(
        f"{len(SEED_PROFILES)} simulated deployments side by side at x{time_scale:g} real "
        f"time, rounds per level: {rounds} (the defaults take about 6 minutes on 2 cores)",
        highlight=False,
    )
    with DemoProgress(console) as display:
        result = run_demo(out, rounds, levels, time_scale, progress_for=display.sink)
    # the live display is stopped: nothing below is drawn over
    print_plan(Console(), result.plan, headline_last=True)
    print(f"runs: {out / 'runs'}")
    if result.report_html:
        print(f"report: {result.report_html}")
