"""`run_demo`: the main job on a machine with no server: simulate, sweep, report.

Each calibrated seed profile runs as its own simulator process on a free loopback port,
swept by its own client process, all four side by side: at the seed's levels a simulated
deployment and its client each use a few percent of a core (the time goes in the modelled
GPU steps, not in CPU), so running them together keeps every stream's timing honest at real
time (x1) and takes as long as the slowest deployment (sglang-spec, about 6 minutes with the
seed's 10 rounds) instead of the sum (about 17). Each level's client health (loop lag, CPU
share, stamp lag) is recorded as in any run, so a machine too busy for this says so.
"""

from __future__ import annotations

import multiprocessing
import queue
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servecap.api.plan import CapacityReport, plan_runs
from servecap.api.progress import NullProgress, ProgressSink
from servecap.api.queue_progress import QueueProgress
from servecap.api.run import Secrets, run_benchmark
from servecap.core.config import DEFAULT_LEVELS, SLO, ClientOptions, RunConfig
from servecap.sim.runner import start_server_process
from servecap.storage.runs import Run, load_runs

SEED_PROFILES: tuple[str, ...] = ("vllm-direct", "vllm-spec", "sglang-direct", "sglang-spec")
DEMO_ROUNDS = 10  # the seed's: P90 from fewer samples is one or two requests at c=1-2
_POLL_S = 0.5


@dataclass
class DemoResult:
    run_dirs: list[Path]
    report_html: Path | None
    plan: CapacityReport


def _sweep(profile: str, rounds: int, levels: tuple[int, ...], time_scale: float,
           runs_dir: str, events: Any) -> None:
    """Child process: one simulator, one sweep; ends with ("finished"|"error", detail)."""
    try:
        with start_server_process(profile, time_scale=time_scale) as server:
            config = RunConfig(
                name=profile, concurrency=list(levels), rounds=rounds, out_dir=runs_dir,
                client=ClientOptions(base_url=server.base_url),
            )
            outcome = run_benchmark(config, Secrets(), QueueProgress(events, profile))
        events.put((profile, "finished", (str(outcome.run_dir),)))
    except BaseException as exc:  # the parent reports it; a child has no console of its own
        events.put((profile, "error", (f"{type(exc).__name__}: {exc}",)))


def run_demo(
    out_dir: Path,
    rounds: int = DEMO_ROUNDS,
    levels: tuple[int, ...] = DEFAULT_LEVELS,
    time_scale: float = 1.0,
    profiles: tuple[str, ...] = SEED_PROFILES,
    progress_for: Callable[[str], ProgressSink] | None = None,
) -> DemoResult:
    """Sweep every profile side by side, then report and plan over all of them."""
    runs_dir = out_dir / "runs"
    sinks = {p: progress_for(p) if progress_for else NullProgress() for p in profiles}
    done = _sweep_side_by_side(profiles, rounds, levels, time_scale, runs_dir, sinks)
    run_dirs = [done[p] for p in profiles]
    runs = load_runs(run_dirs)
    return DemoResult(run_dirs, _write_report(runs, out_dir / "report"), plan_runs(runs, SLO()))


def _sweep_side_by_side(
    profiles: tuple[str, ...], rounds: int, levels: tuple[int, ...], time_scale: float,
    runs_dir: Path, sinks: dict[str, ProgressSink],
) -> dict[str, Path]:
    # spawn, not fork: the parent may hold threads (a UI, a progress display)
    ctx = multiprocessing.get_context("spawn")
    events = ctx.Queue()
    children = [
        ctx.Process(target=_sweep, args=(p, rounds, levels, time_scale, str(runs_dir), events),
                    name=f"servecap-demo-{p}", daemon=True)
        for p in profiles
    ]
    for child in children:
        child.start()
    try:
        return _drain(events, children, sinks)
    finally:
        for child in children:
            if child.is_alive():
                child.terminate()
            child.join(timeout=10)


def _drain(events: Any, children: list[Any], sinks: dict[str, ProgressSink]) -> dict[str, Path]:
    """Forward the children's events to their sinks until every sweep has finished."""
    done: dict[str, Path] = {}
    while len(done) < len(sinks):
        try:
            profile, kind, args = events.get(timeout=_POLL_S)
        except queue.Empty:
            if not any(child.is_alive() for child in children):
                raise RuntimeError("a demo sweep ended without reporting") from None
            continue
        if kind == "finished":
            done[profile] = Path(args[0])
        elif kind == "error":
            raise RuntimeError(f"demo sweep {profile} failed: {args[0]}")
        else:
            getattr(sinks[profile], kind)(*args)
    return done


def _write_report(runs: list[Run], report_dir: Path) -> Path | None:
    from servecap.api.report import ReportOptions, build_report, write_report

    model = build_report(runs, ReportOptions(title="servecap demo: four simulated deployments"))
    return write_report(model, report_dir).html
