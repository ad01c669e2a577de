"""`run_demo`: the main job on a machine with no server: simulate, sweep, report.

Starts each calibrated seed profile of the simulator as its own process on a free loopback
port (one at a time, so the simulator and the client never compete for the same core more
than a real deployment would), sweeps it at the seed's levels, then writes the comparison
report and the capacity plan.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from servecap.api.plan import CapacityReport, plan_runs
from servecap.api.progress import ProgressSink
from servecap.api.run import Secrets, run_benchmark
from servecap.core.config import DEFAULT_LEVELS, SLO, ClientOptions, RunConfig
from servecap.sim.runner import start_server_process
from servecap.storage.runs import Run, load_runs

SEED_PROFILES: tuple[str, ...] = ("vllm-direct", "vllm-spec", "sglang-direct", "sglang-spec")
DEMO_ROUNDS = 3


@dataclass
class DemoResult:
    run_dirs: list[Path]
    report_html: Path | None
    plan: CapacityReport


def run_demo(
    out_dir: Path,
    rounds: int = DEMO_ROUNDS,
    levels: tuple[int, ...] = DEFAULT_LEVELS,
    time_scale: float = 1.0,
    profiles: tuple[str, ...] = SEED_PROFILES,
    progress_for: Callable[[str], ProgressSink] | None = None,
) -> DemoResult:
    """Sweep each profile, then report and plan over all of them."""
    runs_dir = out_dir / "runs"
    run_dirs: list[Path] = []
    for profile in profiles:
        with start_server_process(profile, time_scale=time_scale) as server:
            config = RunConfig(
                name=profile,
                concurrency=list(levels),
                rounds=rounds,
                out_dir=str(runs_dir),
                client=ClientOptions(base_url=server.base_url),
            )
            sink = progress_for(profile) if progress_for else None
            outcome = run_benchmark(config, Secrets(), sink)
            run_dirs.append(outcome.run_dir)
    runs = load_runs(run_dirs)
    return DemoResult(run_dirs, _write_report(runs, out_dir / "report"), plan_runs(runs, SLO()))


def _write_report(runs: list[Run], report_dir: Path) -> Path | None:
    from servecap.api.report import ReportOptions, build_report, write_report

    model = build_report(runs, ReportOptions(title="servecap demo: four simulated deployments"))
    return write_report(model, report_dir).html
