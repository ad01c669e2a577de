"""`run_demo`: the main job on a machine with no server: simulate, compare, verify, report.

The seed's four deployments run as four simulator processes on loopback, compared as
`servecap compare` compares (same prompts in the same order for every target, every level's
records kept per repeat, `comparison.json` with the seed's three pairs): vllm-spec against
vllm-direct, sglang-spec against sglang-direct, vllm-direct against sglang-direct. Each
target's client runs in a process of its own (`api.comparison.lockstep`), and by default in
lock-step: each level runs on all four at the same moments, so drift on the machine hits
them alike, and the demo takes as long as the slowest deployment at each level (7 minutes
at x1 with the seed's 10 rounds) rather than the sum of the four (about 17, the
`interleaved` schedule, one slot at a time); the whole demo took 8 min 45 s on a 2-core
machine at load average 7 when its verification passed at once, 10 min 58 s on a quiet one
when it searched three more levels (2026-12-06). At the seed's levels a simulated deployment and
its client use a few percent of a core each; every level's client health is recorded as in
any run, so a machine too busy for this says so.

Then it verifies the users of the deployment that wins on P90 (`api.predict.verify`): that many
users with the seed's 45 s think time (exponential) and one-turn conversations (the sweep's
request shape), against the same simulator at the same time scale, for `verify_s` seconds
after a warm-up of `VERIFY_WARMUP_S` (users start as a steady population would send);
`verification.json` lies in that verify run, which is in the comparison directory beside
the sweeps, and the report reads it there. Where the predicted users miss the SLOs, it goes
on to find the users that hold (`VERIFY_SEARCH_*`: at most three more levels): the demo
then says by how much Little's law on the closed loop's C_max overstated them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from servecap.api.comparison.config import CompareConfig
from servecap.api.comparison.lockstep import Schedule, run_lockstep
from servecap.api.comparison.report import compared_report, report_runs
from servecap.api.comparison.run import servers
from servecap.api.comparison.targets import Target
from servecap.api.demo_settings import (
    DEMO_REPEATS,
    DEMO_ROUNDS,
    VERIFY_S,
    VERIFY_SEARCH_BUDGET,
    VERIFY_SEARCH_FACTOR,
    VERIFY_SEARCH_TOLERANCE,
    VERIFY_THINK,
    VERIFY_TURNS,
    VERIFY_WARMUP_S,
)
from servecap.api.predict.verify import Verification, VerifyOptions, verify
from servecap.api.run.progress import ProgressSink
from servecap.api.run.run import Secrets
from servecap.api.run.run_config import RunConfig
from servecap.api.stored.plan import CapacityReport, plan_runs
from servecap.api.stored.report import ReportOptions, write_report
from servecap.core.config import DEFAULT_LEVELS, SLO
from servecap.report.comparison import ComparisonSection
from servecap.storage.runs import load_runs

SEED_PROFILES: tuple[str, ...] = ("vllm-direct", "vllm-spec", "sglang-direct", "sglang-spec")
# (A, B): B against A, as the seed compares them
SEED_PAIRS: tuple[tuple[str, str], ...] = (
    ("vllm-direct", "vllm-spec"), ("sglang-direct", "sglang-spec"),
    ("sglang-direct", "vllm-direct"),
)


@dataclass
class DemoOptions:
    rounds: int = DEMO_ROUNDS
    levels: tuple[int, ...] = DEFAULT_LEVELS
    time_scale: float = 1.0
    repeats: int = DEMO_REPEATS
    schedule: Schedule = "lockstep"
    verify_s: float = VERIFY_S  # 0: no verification
    profiles: tuple[str, ...] = SEED_PROFILES


@dataclass
class DemoResult:
    comparison_dir: Path
    run_dirs: list[Path]
    report_html: Path | None
    plan: CapacityReport
    comparison: ComparisonSection | None = None
    winner: str | None = None  # most users on P90
    verification: Verification | None = None
    verify_dir: Path | None = None
    time_scale: float = 1.0


def _pairs(profiles: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(a, b) for a, b in SEED_PAIRS if a in profiles and b in profiles]


def _winner(plan: CapacityReport) -> str | None:
    held = [r for r in plan.runs if r.users is not None]
    if not held:
        return None
    return max(held, key=lambda r: (r.users or 0, r.c_max or 0)).name


def _verify_options(seconds: float, out_dir: Path, slo: SLO) -> VerifyOptions:
    return VerifyOptions(
        statistic=slo.statistic, ttft_slo_ms=slo.ttft_ms, tps_slo=slo.tps,
        think=VERIFY_THINK, turns=VERIFY_TURNS, ramp_s=min(seconds, VERIFY_WARMUP_S),
        duration_s=seconds, out_dir=str(out_dir), search_on_miss=True,
        factor=VERIFY_SEARCH_FACTOR, tolerance=VERIFY_SEARCH_TOLERANCE,
        budget=VERIFY_SEARCH_BUDGET,
    )


def run_demo(
    out_dir: Path,
    options: DemoOptions | None = None,
    progress_for: Callable[[str], ProgressSink] | None = None,
    verify_progress: Callable[[str], ProgressSink] | None = None,
) -> DemoResult:
    """Compare the seed's deployments, verify the P90 winner's users, report."""
    options = options or DemoOptions()
    slo = SLO()
    targets = [Target(name=p, sim_profile=p) for p in options.profiles]
    workload = RunConfig(concurrency=list(options.levels), rounds=options.rounds,
                         out_dir=str(out_dir / "runs"))
    config = CompareConfig(targets, workload, options.repeats, slo=slo,
                           pairs=_pairs(options.profiles))
    with servers(targets, options.time_scale) as urls:
        outcome = run_lockstep(config, urls, progress_for, options.schedule)
        comp_dir = outcome.path
        run_dirs = [comp_dir / t["run_dir"] for t in outcome.file.targets]
        plan = plan_runs(load_runs(run_dirs), slo)
        result = DemoResult(comp_dir, run_dirs, None, plan, winner=_winner(plan),
                            time_scale=options.time_scale)
        if options.verify_s > 0 and result.winner is not None:
            sweep = run_dirs[[t.name for t in targets].index(result.winner)]
            sink = verify_progress(result.winner) if verify_progress else None
            result.verification, run = verify(
                sweep, _verify_options(options.verify_s, comp_dir, slo), Secrets(), sink)
            result.verify_dir = run.run_dir
            # planned again: the winner's table and the decision name the verified users
            # (the verify run lies beside the sweeps, where plan finds it)
            result.plan = plan_runs(load_runs(run_dirs), slo)
    _report(result, out_dir / "report", options.time_scale)
    return result


def _report(result: DemoResult, report_dir: Path, time_scale: float) -> None:
    """The report over the comparison directory: its four sweeps, leading with the pairs."""
    runs = report_runs([result.comparison_dir])  # the sweeps; the verify run is beside them
    title = f"servecap demo: four simulated deployments (x{time_scale:g} real time)"
    model, section = compared_report([result.comparison_dir], runs, ReportOptions(title=title))
    result.comparison = section
    result.report_html = write_report(model, report_dir).html
