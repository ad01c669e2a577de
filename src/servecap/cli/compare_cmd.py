"""`servecap compare`: targets through the same workload, interleaved and repeated."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from servecap.api.comparison.config import (
    DEFAULT_COMPARE_LEVELS,
    DEFAULT_REPEATS,
    compare_workload,
)
from servecap.api.run.load_settings import LoadSettings
from servecap.api.run.run_config import RunConfig
from servecap.api.run.workload_options import WorkloadFlags
from servecap.cli import run_flags_load as lf
from servecap.cli import run_flags_open as op
from servecap.cli import run_flags_prefix as pc
from servecap.cli import run_flags_sessions as sf
from servecap.cli import run_flags_workload as wf
from servecap.cli.common import (
    EXIT_INTERRUPTED,
    SLO_DEFAULTS,
    StatChoice,
    StatOption,
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
from servecap.cli.run_flags_workers import RayOption, WorkersOption, config_fields
from servecap.core.errors import UserInputError
from servecap.core.text import printable
from servecap.core.validation import user_input_error

RUN = RunConfig()
DEFAULT_LEVELS = ",".join(map(str, DEFAULT_COMPARE_LEVELS))
WORKLOAD_FLAGS = {
    "model": "--model", "endpoint": "--endpoint", "concurrency": "--concurrency",
    "rounds": "--rounds", "input_tokens": "--input-tokens", "output_tokens": "--output-tokens",
    "warmup": "--warmup", "seed": "--seed", "out_dir": "--out", "extra_body": "--extra-body",
    "workload": "--dataset/--prefix-tokens", "load": "--rate/--users/--trace/--load",
    "outage_s": "--outage-s",
    **pc.FLAGS,
}


def _workload(
    flags: LoadSettings, rounds: int, warmup: int, out: Path, model: str | None,
    extra_body: str | None, outage_s: float, reset_prefix_cache: str = pc.RESET_DEFAULT,
) -> RunConfig:
    """The workload every target runs: any load `run` accepts, and what it sends."""
    from servecap.api.run.request_options import parse_extra_body
    from servecap.api.run.workload_options import check_source

    body = parse_extra_body(extra_body)
    try:
        config = compare_workload(
            flags, rounds=rounds, warmup=warmup, seed=flags.seed, out_dir=str(out),
            model=model, extra_body=body, outage_s=outage_s,
            reset_prefix_cache=reset_prefix_cache,
        )
    except ValidationError as exc:
        raise user_input_error(exc, WORKLOAD_FLAGS) from None
    check_source(config)  # a malformed dataset or trace is named before any load
    return config


@user_errors
def compare(
    target: Annotated[list[str] | None, typer.Option(
        "--target", help="NAME=BASE_URL, or NAME=sim:PROFILE[*SLOWDOWN]; two or more")] = None,
    target_model: Annotated[list[str] | None, typer.Option(
        "--target-model", help="NAME=MODEL: this target's model")] = None,
    target_extra_body: Annotated[list[str] | None, typer.Option(
        "--target-extra-body", help="NAME=JSON: this target's extra request fields")] = None,
    pair: Annotated[list[str] | None, typer.Option(
        "--pair", help="SPEC:BASE target names to compare (default: each against the first)"
    )] = None,
    repeats: Annotated[int, typer.Option(help="Runs of every level per target")] = (
        DEFAULT_REPEATS),
    concurrency: Annotated[str | None, typer.Option(
        help=f"Concurrency levels, e.g. 1,2,4 (default {DEFAULT_LEVELS})")] = None,
    rounds: Annotated[int, typer.Option(help="Requests per stream per level")] = RUN.rounds,
    input_tokens: wf.InputTokens = str(RUN.input_tokens),
    output_tokens: wf.OutputTokens = str(RUN.output_tokens),
    rate: op.RateOption = None,
    arrival: op.ArrivalOption = "poisson",
    duration: sf.DurationOption = None,
    requests: op.RequestsOption = None,
    max_concurrency: op.MaxConcurrencyOption = None,
    warmup_s: op.WarmupSOption = None,
    cooldown_s: op.CooldownSOption = None,
    users: sf.UsersOption = None,
    think_time: sf.ThinkTimeSpecOption = sf.DEFAULTS.think,
    turns: sf.TurnsOption = None,
    ramp_s: sf.RampOption = sf.DEFAULTS.ramp_s,
    load: lf.LoadOption = None,
    dataset: wf.DatasetOpt = None,
    dataset_format: wf.DatasetFormatOpt = "auto",
    prefix_tokens: wf.PrefixTokensOpt = None,
    prefix_groups: wf.PrefixGroupsOpt = 1,
    prefix_hit_rate: pc.PrefixHitRateOption = None,
    reset_prefix_cache: pc.ResetPrefixCacheOption = pc.RESET_DEFAULT,
    trace: wf.TraceOpt = None,
    trace_format: wf.TraceFormatOpt = "auto",
    trace_speed: wf.TraceSpeedOpt = "1",
    trace_duration: wf.TraceDurationOpt = None,
    warmup: Annotated[int, typer.Option(help="Warm-up requests per target")] = RUN.warmup,
    seed: Annotated[int, typer.Option(help="Prompt order and interleaving seed")] = RUN.seed,
    model: Annotated[str | None, typer.Option(help="Model for every target")] = None,
    extra_body: Annotated[str | None, typer.Option(help="JSON for every request")] = None,
    allow_different_models: Annotated[bool, typer.Option(
        "--allow-different-models", help="Compare targets that serve different models")] = False,
    out: Annotated[Path, typer.Option(
        "--out", parser=out_dir, help="Directory for the comparison")] = Path("results"),
    ttft_slo_ms: TtftSloOption = SLO_DEFAULTS.ttft_ms,
    tps_slo: TpsSloOption = SLO_DEFAULTS.tps,
    think_time_s: ThinkTimeOption = SLO_DEFAULTS.think_time_s,
    stat: StatOption = StatChoice(SLO_DEFAULTS.statistic),
    lockstep: Annotated[bool, typer.Option(
        "--lockstep", help="Each target's client in its own process, every level on all "
        "targets at once")] = False,
    outage_s: Annotated[float, typer.Option(
        help="Stop the comparison (exit 1, kept) once a target has answered only failures "
             "for this long, s")] = RUN.outage_s,
    gpus: GpusOption = None,
    gpu_hour_cost: GpuHourCostOption = None,
    currency: CurrencyOption = None,
    target_gpus: Annotated[list[str] | None, typer.Option(
        "--target-gpus", help="NAME=N: this target's GPUs (over --gpus)")] = None,
    workers: WorkersOption = "auto",
    ray: RayOption = None,
) -> None:
    """Compare deployments fairly: interleaved levels, repeats, differences with intervals.

    Any load `run` accepts: concurrency levels by default, --rate, --users, --trace or
    --load, with the same datasets and length distributions.
    """
    from servecap.analysis.speedup import parse_pair
    from servecap.api.comparison.config import CompareConfig
    from servecap.api.comparison.lockstep import run_in_processes
    from servecap.api.comparison.run import run_comparison
    from servecap.api.comparison.targets import build_targets

    targets = build_targets(target or [], target_model or [], target_extra_body or [],
                            target_gpus or [])
    cost = cost_fields(gpus, gpu_hour_cost, currency)
    slo = slo_from_flags(ttft_slo_ms, tps_slo, stat, think_time_s)
    flags = LoadSettings(
        WorkloadFlags(input_tokens, output_tokens, dataset, dataset_format, None, prefix_tokens,
                      prefix_groups, trace, trace_format, trace_speed, 0.0, trace_duration,
                      prefix_hit_rate=prefix_hit_rate),
        "chat", seed, concurrency, users, think_time, turns, ramp_s, duration, rate, arrival,
        1.0, requests, max_concurrency, warmup_s, cooldown_s, load,
    )
    if lockstep and (workers != "auto" or ray is not None):
        raise UserInputError("--lockstep runs each target in a process of its own: give "
                             "--lockstep or --workers/--ray, not both")
    workload = _workload(flags, rounds, warmup, out, model, extra_body, outage_s,
                         reset_prefix_cache)
    workload = workload.model_copy(update=config_fields(workers, ray))  # parsed and checked
    workload.cost = cost
    names = [t.name for t in targets]
    pairs = [parse_pair(text, names) for text in pair or []]
    config = CompareConfig(targets, workload, repeats, allow_different_models, slo,
                           [(p.base, p.spec) for p in pairs])
    try:
        outcome = run_in_processes(config) if lockstep else run_comparison(config)
    except KeyboardInterrupt:
        print("interrupted: the slots finished so far are kept", file=sys.stderr)
        raise typer.Exit(EXIT_INTERRUPTED) from None
    print(f"comparison: {outcome.path}")
    from servecap.api.comparison.cost import cost_lines

    priced = cost_lines(outcome.file.headlines, outcome.file.pairs, config)
    for head, extra in zip(outcome.file.headlines, priced, strict=False):
        first, *rest = head["sentences"] or [""]
        for line in [first, *extra, *rest]:
            print(f"  {printable(line)}")
