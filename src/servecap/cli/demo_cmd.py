"""`servecap demo`: the whole main job against the built-in simulator, no server needed.

The terminal shows one live display at a time: the comparison's bars (one per deployment),
stopped; then the verification's bar, stopped; then, with nothing drawn over them, the
capacity tables, the seed's pairs with their intervals, the verification, and the decision.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from servecap.api.demo_settings import DEMO_REPEATS, DEMO_ROUNDS, VERIFY_S
from servecap.cli.common import EXIT_INTERRUPTED, out_dir, user_errors
from servecap.core.config import DEFAULT_LEVELS, parse_levels
from servecap.core.errors import UserInputError
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary
from servecap.core.text import printable

if TYPE_CHECKING:
    from servecap.api.capacity.demo import CapacityDemo
    from servecap.api.demo import DemoResult


class DemoProgress:
    """One live display: a bar per deployment (or the one verify run)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.bars = Progress(
            TextColumn("{task.fields[profile]:<20}"), TextColumn("{task.description:>9}"),
            BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console,
        )

    def sink(self, profile: str) -> _ProfileBar:
        task = self.bars.add_task("start", total=None, profile=profile)
        return _ProfileBar(self, task, profile)

    def verify_sink(self, profile: str) -> _ProfileBar:
        """The verify run's bar: users run for a time, not a count, so it has no total."""
        task = self.bars.add_task("start", total=None, profile=f"{profile} verify")
        return _ProfileBar(self, task, f"{profile} verify", counted=False)

    def __enter__(self) -> DemoProgress:
        self.bars.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bars.stop()


class _ProfileBar:
    """One deployment's sweep, drawn as a task of the shared display."""

    def __init__(self, owner: DemoProgress, task: object, profile: str,
                 counted: bool = True) -> None:
        self.bars, self.task, self.profile = owner.bars, task, profile
        self.counted = counted
        self.done = 0

    def started(self, total_requests: int, run_dir: str, model: str) -> None:
        if self.counted:
            self.bars.update(self.task, total=total_requests)  # type: ignore[arg-type]

    def level_started(self, level: LevelKey, n_requests: int) -> None:
        self.bars.update(self.task, description=str(level))  # type: ignore[arg-type]
        if self.counted:  # a plan deciding its levels as it goes outgrows its first total
            total = self.done + n_requests
            self.bars.update(self.task, total=total)  # type: ignore[arg-type]

    def request_done(self, record: RequestRecord) -> None:
        self.done += 1
        self.bars.update(self.task, advance=1)  # type: ignore[arg-type]

    def level_done(self, summary: LevelSummary) -> None:
        bound = ", client-bound" if summary.client_bound else ""
        self.bars.console.print(
            f"{self.profile} {summary.key}: {summary.n_ok} ok, {summary.n_failed} "
            f"failed, TTFT P90 {summary.ttft_p90_ms or 0:.1f} ms, TPS P90 "
            f"{summary.tps_p90 or 0:.1f}{bound}",
            highlight=False, markup=False,
        )


def _say(console: Console, text: str) -> None:
    console.print(printable(text), markup=False, highlight=False)


def _print_pairs(console: Console, result: DemoResult) -> None:
    """The seed's pairs as capacity deltas with their intervals, warnings beside."""
    section = result.comparison
    if section is None:
        return
    console.print()
    _say(console, "The seed's comparisons (95% intervals):")
    for pair in section.pairs:
        _say(console, f"{pair.b} vs {pair.a}:")
        for line in pair.lines:
            _say(console, f"  {line.text}{line.note()}")


def _print_verification(console: Console, result: DemoResult) -> None:
    from servecap.api.predict.verify import summary_line

    if result.verification is None:
        if result.winner is None:
            console.print()
            _say(console, "No deployment meets the SLOs on P90: no users to verify.")
        return
    console.print()
    _say(console, f"Verification of {result.winner} (the P90 winner) on the simulator at "
                  f"x{result.time_scale:g} real time: its predicted users, thinking exp:45 s "
                  "between one-request conversations")
    for line in summary_line(result.verification).splitlines():
        _say(console, f"  {line}")


@user_errors
def demo(
    out: Annotated[Path, typer.Option(parser=out_dir, help="Where runs and the report go")] = Path(
        "demo-output"
    ),
    rounds: Annotated[int, typer.Option(min=1, help="Requests per level = rounds x c")] = (
        DEMO_ROUNDS),
    concurrency: Annotated[str, typer.Option(help="Levels")] = ",".join(map(str, DEFAULT_LEVELS)),
    full: Annotated[bool, typer.Option(
        "--full", help="The seed report's own procedure instead: the grid of c = 1..64 x 10 "
        "rounds on all four, their comparison, the winner verified (about 11 minutes)")] = False,
    time_scale: Annotated[float | None, typer.Option(
        min=0.1, max=100.0, help="Simulate this many times real time (default 10; 1 with "
        "--full)")] = None,
    repeats: Annotated[int, typer.Option(min=1, help="Runs of every level per deployment")] = (
        DEMO_REPEATS),
    interleaved: Annotated[bool, typer.Option(
        "--interleaved", help="One deployment at a time in the interleaved order (about 17 "
        "min) instead of all four in lock-step")] = False,
    verify_s: Annotated[float, typer.Option(
        min=0.0, help="Seconds measured when verifying the P90 winner's users, after a "
        "15 s warm-up (0: skip)")] = VERIFY_S,
) -> None:
    """Find the capacity of the seed report's four simulated deployments, verify the
    winner's users, and report (--full: the seed's own grid and comparison)."""
    if not full:
        _capacity_demo(out, 10.0 if time_scale is None else time_scale)
        return
    time_scale = 1.0 if time_scale is None else time_scale
    from servecap.api.demo import SEED_PROFILES, DemoOptions, run_demo

    levels = tuple(parse_levels(concurrency))
    if len(levels) < 1:
        raise UserInputError("--concurrency needs at least one level")
    options = DemoOptions(rounds, levels, time_scale, repeats,
                          "interleaved" if interleaved else "lockstep", verify_s)
    console = Console(stderr=True)
    how = "one at a time, interleaved" if interleaved else "in lock-step, each level at once"
    _say(console, f"{len(SEED_PROFILES)} simulated deployments {how}, at x{time_scale:g} "
                  f"real time, {rounds} rounds per level, {repeats} repeat(s); then the P90 "
                  f"winner's users verified for {verify_s:g} s, and where they miss the SLOs "
                  "the users that hold are searched for (the defaults take about 11 minutes: "
                  "10 min 58 s measured on a 2-core machine, a search of 3 levels included)")
    try:
        with DemoProgress(console) as display:
            result = run_demo(out, options, progress_for=display.sink,
                              verify_progress=display.verify_sink)
    except KeyboardInterrupt:
        print("interrupted: the levels finished so far are kept", file=sys.stderr)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    # the live display is stopped: nothing below is drawn over
    _print_ending(Console(), result)


def _capacity_demo(out: Path, time_scale: float) -> None:
    from servecap.api.capacity.demo import SEED_PROFILES, run_capacity_demo

    console = Console(stderr=True)
    _say(console, f"servecap capacity on the seed report's {len(SEED_PROFILES)} simulated "
                  f"deployments at x{time_scale:g} real time, then the users of the one "
                  "predicted to hold the most, verified (about 3 minutes on 2 cores)")
    try:
        with DemoProgress(console) as display:
            demo = run_capacity_demo(out, time_scale, progress_for=display.sink)
    except KeyboardInterrupt:
        print("interrupted: the probes finished so far are kept", file=sys.stderr)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    _print_capacity_ending(Console(), demo)


def _print_capacity_ending(console: Console, demo: CapacityDemo) -> None:
    """The winner's answer first, then every deployment beside the seed's grid."""
    from servecap.api.capacity.demo import SEED_P90_CMAX
    from servecap.storage.capacity_answer import grid_equivalent

    if demo.winner is not None:
        _say(console, "Deploy " + demo.answers[demo.winner].sentence())
    print(f"{'deployment':<14} {'C_max':>5} {'miss':>5} {'grid-eq.':>8} {'seed':>5} "
          f"{'predicted':>9} {'verified':>8} {'requests':>8} {'seconds':>7}")
    for name, a in demo.answers.items():
        print(f"{name:<14} {_s(a.c_max):>5} {_s(a.first_miss):>5} "
              f"{_s(grid_equivalent(a.c_max)):>8} {_s(SEED_P90_CMAX.get(name)):>5} "
              f"{_s(a.predicted_users):>9} {_s(a.verified_users):>8} {a.requests:>8} "
              f"{a.elapsed_s:>7.0f}")
    print("grid-eq.: the largest power of two at or below C_max, what the seed's grid of "
          "c = 1, 2, 4, ..., 64 reads; seed: that grid's P90 C_max in the seed report")
    print(f"answers: {demo.out_dir}/<deployment>/capacity.json")
    print(f"report: {demo.report_html}")
    print(f"explore them in the app: servecap ui --results {demo.out_dir}")


def _s(value: int | None) -> str:
    return "-" if value is None else str(value)


def _print_ending(console: Console, result: DemoResult) -> None:
    """Tables, the seed's pairs, the verification, then the decision and the paths."""
    from servecap.cli.tables import capacity_table, headline_lines, print_table

    for run in result.plan.runs:
        print_table(console, capacity_table(run, result.plan.slo.statistic))
    _print_pairs(console, result)
    _print_verification(console, result)
    console.print()
    for line in headline_lines(result.plan):
        _say(console, line)
    print(f"runs: {result.comparison_dir}")
    if result.report_html:
        print(f"report: {result.report_html}")
    # the app finds the comparison's runs below this folder (scan_results looks inside)
    print(f"app: servecap ui --results {result.comparison_dir.parent}")
