"""`servecap compare`: targets through the same workload, interleaved and repeated."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from servecap.api.run_config import RunConfig
from servecap.cli.common import (
    EXIT_INTERRUPTED,
    SLO_DEFAULTS,
    StatChoice,
    StatOption,
    ThinkTimeOption,
    TpsSloOption,
    TtftSloOption,
    slo_from_flags,
    user_errors,
)
from servecap.core.config import parse_levels
from servecap.core.errors import UserInputError
from servecap.core.text import printable
from servecap.core.validation import user_input_error

RUN = RunConfig()
WORKLOAD_FLAGS = {
    "model": "--model", "endpoint": "--endpoint", "concurrency": "--concurrency",
    "rounds": "--rounds", "input_tokens": "--input-tokens", "output_tokens": "--output-tokens",
    "warmup": "--warmup", "seed": "--seed", "out_dir": "--out", "extra_body": "--extra-body",
}


def _workload(
    concurrency: str, rounds: int, input_tokens: int, output_tokens: int, warmup: int,
    seed: int, out: Path, model: str | None, extra_body: str | None,
) -> RunConfig:
    from servecap.cli.run_cmd import parse_extra_body  # `run`'s own rule and message

    body = parse_extra_body(extra_body)
    try:
        return RunConfig(
            concurrency=parse_levels(concurrency), rounds=rounds, input_tokens=input_tokens,
            output_tokens=output_tokens, warmup=warmup, seed=seed, out_dir=str(out),
            model=model, extra_body=body,
        )
    except ValidationError as exc:
        raise user_input_error(exc, WORKLOAD_FLAGS) from None


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
    repeats: Annotated[int, typer.Option(help="Runs of every level per target")] = 3,
    concurrency: Annotated[str, typer.Option(help="Concurrency levels, e.g. 1,2,4")] = "1,2,4,8",
    rounds: Annotated[int, typer.Option(help="Requests per stream per level")] = RUN.rounds,
    input_tokens: Annotated[int, typer.Option(help="Prompt length")] = RUN.input_tokens,
    output_tokens: Annotated[int, typer.Option(help="max_tokens")] = RUN.output_tokens,
    warmup: Annotated[int, typer.Option(help="Warm-up requests per target")] = RUN.warmup,
    seed: Annotated[int, typer.Option(help="Prompt order and interleaving seed")] = RUN.seed,
    model: Annotated[str | None, typer.Option(help="Model for every target")] = None,
    extra_body: Annotated[str | None, typer.Option(help="JSON for every request")] = None,
    allow_different_models: Annotated[bool, typer.Option(
        "--allow-different-models", help="Compare targets that serve different models")] = False,
    out: Annotated[Path, typer.Option("--out", help="Directory for the comparison")] = Path(
        "results"),
    ttft_slo_ms: TtftSloOption = SLO_DEFAULTS.ttft_ms,
    tps_slo: TpsSloOption = SLO_DEFAULTS.tps,
    think_time_s: ThinkTimeOption = SLO_DEFAULTS.think_time_s,
    stat: StatOption = StatChoice(SLO_DEFAULTS.statistic),
    lockstep: Annotated[bool, typer.Option(
        "--lockstep", help="Each target's client in its own process, every level on all "
        "targets at once")] = False,
) -> None:
    """Compare deployments fairly: interleaved levels, repeats, differences with intervals."""
    from servecap.analysis.speedup import parse_pair
    from servecap.api.compare import run_comparison
    from servecap.api.compare_config import CompareConfig
    from servecap.api.compare_lockstep import run_in_processes
    from servecap.api.compare_targets import build_targets

    targets = build_targets(target or [], target_model or [], target_extra_body or [])
    if repeats < 1:
        raise UserInputError(f"invalid --repeats {repeats}: at least 1")
    slo = slo_from_flags(ttft_slo_ms, tps_slo, stat, think_time_s)
    workload = _workload(concurrency, rounds, input_tokens, output_tokens, warmup, seed, out,
                         model, extra_body)
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
    for head in outcome.file.headlines:
        for line in head["sentences"]:
            print(f"  {printable(line)}")
