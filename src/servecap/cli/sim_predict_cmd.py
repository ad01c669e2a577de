"""`servecap sim predict PROFILE`: a calibrated profile's C_max, users and levels, no server.

Registered on the `sim` group by `cli.main` (the simulator package itself stays an island:
judging levels against SLOs is the stats layer's, which the simulator may not import).
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from servecap.api.predict.predict import (
    DEFAULT_DRAWS,
    Prediction,
    error_label,
    predict,
    predicting_profile,
)
from servecap.cli.common import (
    SLO_DEFAULTS,
    StatChoice,
    StatOption,
    ThinkTimeOption,
    TpsSloOption,
    TtftSloOption,
    fail_input,
    slo_from_flags,
    user_errors,
)
from servecap.cli.tables import levels_table, print_table
from servecap.core.config import parse_levels
from servecap.core.summary import LevelSummary

DEFAULT_LEVELS = "1,2,4,8,16,32,64"


def _headline(pred: Prediction, statistic: str) -> str:
    plan = pred.plan
    if plan.c_max is None:
        return f"Predicted: no level meets the SLO at {statistic.upper()}."
    more = " (every level passed: test higher)" if plan.c_max_lower_bound else ""
    return (
        f"Predicted C_max {plan.c_max}{more}: {plan.users} users at "
        f"{statistic.upper()}, mean latency {plan.latency_mean_s:.2f} s at C_max."
    )


# Each is work done on this machine, in virtual time but for real: `--draws 1000000000` never
# ended. The bounds are far above any use (a draw of the default sweep takes ~1 s).
UPPER_BOUNDS = {"--draws": 1000, "--rounds": 100_000, "--users": 1_000_000,
                "--input-tokens": 10_000_000, "--output-tokens": 10_000_000}

@user_errors
def predict_cmd(
    profile: Annotated[str, typer.Argument(help="Built-in profile name or a .toml/.json file")],
    concurrency: Annotated[str, typer.Option(help="Levels to predict")] = DEFAULT_LEVELS,
    input_tokens: Annotated[int, typer.Option(
        help="Prompt tokens per request, as the server counts them (sim calibrate's unit)"
    )] = 128,
    output_tokens: Annotated[int, typer.Option(help="Output tokens per request")] = 128,
    rounds: Annotated[int, typer.Option(help="Requests per stream, as `servecap run`")] = 10,
    draws: Annotated[
        int, typer.Option(help="Seeded sweeps: how often each C_max comes out (1: one sweep)")
    ] = DEFAULT_DRAWS,
    ttft_slo_ms: TtftSloOption = SLO_DEFAULTS.ttft_ms,
    tps_slo: TpsSloOption = SLO_DEFAULTS.tps,
    stat: StatOption = StatChoice(SLO_DEFAULTS.statistic),
    think_time_s: ThinkTimeOption = SLO_DEFAULTS.think_time_s,
    check_users: Annotated[
        bool,
        typer.Option(
            "--check-users/--no-check-users",
            help="Run users on the model, thinking exp:<--think-time-s> between requests",
        ),
    ] = True,
    users: Annotated[
        int | None, typer.Option(help="Users to run on the model (default: the predicted users)")
    ] = None,
    format: Annotated[str, typer.Option(help="table or json")] = "table",
) -> None:
    """Predict C_max, users and the per-level table from a calibrated profile (no server)."""
    if format not in ("table", "json"):
        raise fail_input(f"invalid --format {format!r}: use table or json")
    counts = [("--input-tokens", input_tokens), ("--output-tokens", output_tokens),
              ("--rounds", rounds), ("--draws", draws)]  # fmt: skip
    if users is not None:
        counts.append(("--users", users))
        if not check_users:
            raise fail_input("--users names the users to run on the model: drop "
                             "--no-check-users")  # fmt: skip
    for flag, value in counts:
        if value < 1:
            raise fail_input(f"invalid {flag} {value}: must be >= 1")
        if value > UPPER_BOUNDS[flag]:
            raise fail_input(f"invalid {flag} {value}: must be <= {UPPER_BOUNDS[flag]}")
    levels = parse_levels(concurrency)
    slo = slo_from_flags(ttft_slo_ms, tps_slo, stat, think_time_s)
    prof = predicting_profile(profile)
    pred = predict(prof, levels, slo, input_tokens, output_tokens, rounds, draws=draws,
                   check=check_users, users=users)  # fmt: skip
    if format == "json":
        print(pred.model_dump_json(indent=2))
        return
    console = Console()
    label = error_label(pred.holdout_mape, pred.holdout_max_cell_error, pred.measure_next)
    plain = {"markup": False, "highlight": False, "soft_wrap": True}
    console.print(f"{prof.name}: {pred.label}; {label}", **plain)  # type: ignore[arg-type]
    if pred.holdout_split:
        console.print(f"held-out error measured as: {pred.holdout_split}", **plain)  # type: ignore[arg-type]
    if pred.loose:
        console.print(f"loose: {pred.loose}", **plain)  # type: ignore[arg-type]
    for note in (pred.workload_note(), pred.slo_note()):
        if note is not None:
            console.print(f"note: {note}", **plain)  # type: ignore[arg-type]
    summaries = [LevelSummary.model_validate(row) for row in pred.levels]
    title = f"predicted {input_tokens} in / {output_tokens} out, {rounds} rounds"
    print_table(console, levels_table(title, summaries))
    console.print(_headline(pred, slo.statistic), **plain)  # type: ignore[arg-type]
    if (spread := pred.draws_line()) is not None:
        console.print(spread, **plain)  # type: ignore[arg-type]
    if pred.users_check is not None:
        console.print(pred.users_check.line(), **plain)  # type: ignore[arg-type]
