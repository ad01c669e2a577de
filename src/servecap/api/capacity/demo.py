"""`servecap demo`: `servecap capacity` on the seed report's four simulated deployments.

The four simulators start at a time scale (x10 by default: the demo takes minutes, not the
report's hour; every answer is judged on the simulator's clock, `capacity`'s time scale).
Each deployment's boundary is searched in turn, except that the searches in `OVERLAPPED`
run beside the others (their probes stay at a few streams, so their client and simulator
need little CPU: on 2 cores the others' figures do not move, and the demo does not wait for
their long low-concurrency requests); then the users of the deployment predicted to hold the
most are verified against its simulator, and one report covers every run. The
grid-equivalent C_max (the largest power of two at or below the continuous one) is what
the seed's own grid of c = 1, 2, 4, ..., 64 would read, printed beside the seed's.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from servecap.api.capacity.by_load import find_capacity
from servecap.api.capacity.capacity import CapacityOptions, verify_answer
from servecap.api.comparison.run import servers
from servecap.api.comparison.targets import Target
from servecap.api.run.progress import ProgressSink
from servecap.api.run.run_config import RunConfig
from servecap.api.stored.report import build_report, write_report
from servecap.core.config import SLO, ClientOptions, on_clock
from servecap.report import ReportOptions
from servecap.storage.capacity_answer import CapacityAnswer, write_answer
from servecap.storage.runs import load_runs

SEED_PROFILES: tuple[str, ...] = ("vllm-direct", "vllm-spec", "sglang-direct", "sglang-spec")
# the seed report's P90 C_max (its Appendix A read by `servecap plan`: the largest level of
# its grid within P90 TTFT <= 1 s and TPS >= 15)
SEED_P90_CMAX = {"vllm-direct": 32, "vllm-spec": 32, "sglang-direct": 16, "sglang-spec": 2}
DEMO_TIME_SCALE = 10.0
DEMO_USERS_S = 60.0
# searched beside the others: the seed's sglang-spec holds 2 streams, so its probes stay at
# c <= 4 (a few requests in flight, each slow on the simulator's clock)
OVERLAPPED: frozenset[str] = frozenset({"sglang-spec"})

ProgressFor = Callable[[str], ProgressSink]


@dataclass
class CapacityDemo:
    """Each deployment's answer, the winner (verified), and the report."""

    out_dir: Path
    answers: dict[str, CapacityAnswer] = field(default_factory=dict)
    winner: str | None = None
    report_html: Path | None = None
    time_scale: float = DEMO_TIME_SCALE


def run_capacity_demo(
    out_dir: Path, time_scale: float = DEMO_TIME_SCALE,
    progress_for: ProgressFor | None = None, profiles: tuple[str, ...] = SEED_PROFILES,
) -> CapacityDemo:
    """Search every deployment, verify the one predicted to hold the most users, report."""
    demo = CapacityDemo(out_dir, time_scale=time_scale)
    options = CapacityOptions(verify=False, users_duration_s=DEMO_USERS_S)
    targets = [Target(name=p, sim_profile=p) for p in profiles]
    with servers(targets, time_scale) as urls:
        demo.answers = _search_all(profiles, urls, out_dir, options, progress_for)
        demo.winner = _winner(demo.answers)
        if demo.winner is not None:
            sink = progress_for(f"{demo.winner} users") if progress_for else None
            verified = options.model_copy(update={"verify": True})
            answer = verify_answer(demo.answers[demo.winner], verified, progress=sink)
            demo.answers[demo.winner] = answer
            write_answer(out_dir / demo.winner, answer)
    demo.report_html = _report(demo)
    return demo


def _search_all(
    profiles: tuple[str, ...], urls: dict[str, str], out_dir: Path, options: CapacityOptions,
    progress_for: ProgressFor | None,
) -> dict[str, CapacityAnswer]:
    """Every deployment's answer, in `profiles` order: the `OVERLAPPED` ones on a thread of
    their own (each run's load goes from its own worker process), the rest in turn."""

    def search(profile: str) -> CapacityAnswer:
        config = _config(profile, urls[profile], out_dir)
        sink = progress_for(profile) if progress_for else None
        return find_capacity(config, options, progress=sink)

    beside = [p for p in profiles if p in OVERLAPPED]
    with ThreadPoolExecutor(max_workers=max(1, len(beside))) as pool:
        futures: dict[str, Future[CapacityAnswer]] = {p: pool.submit(search, p) for p in beside}
        answers = {p: search(p) for p in profiles if p not in OVERLAPPED}
        answers.update({p: f.result() for p, f in futures.items()})
    return {p: answers[p] for p in profiles}


def _config(profile: str, url: str, out_dir: Path) -> RunConfig:
    return RunConfig(name=profile, client=ClientOptions(base_url=url),
                     out_dir=str(out_dir / profile / "runs"))


def _winner(answers: dict[str, CapacityAnswer]) -> str | None:
    held = {name: a for name, a in answers.items() if a.predicted_users}
    if not held:
        return None
    return max(held, key=lambda name: (held[name].predicted_users or 0, held[name].c_max or 0))


def _report(demo: CapacityDemo) -> Path:
    """One report over the probe runs; each finds its users run beside it."""
    runs = load_runs([Path(a.probe_run) for a in demo.answers.values() if a.probe_run])
    # the report judges levels as measured: at xS, on the simulator's clock (as capacity did)
    slo = on_clock(SLO(), demo.time_scale)
    title = (f"servecap demo: capacity of four simulated deployments (x{demo.time_scale:g}: "
             f"the SLOs on the simulator's clock are TTFT <= {slo.ttft_ms:g} ms, TPS >= "
             f"{slo.tps:g}, think {slo.think_time_s:g} s)")
    model = build_report(runs, ReportOptions(title=title, slo=slo))
    return write_report(model, demo.out_dir / "report").html
