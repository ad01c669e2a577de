"""`servecap run`'s sessions flags: `--users` and what shapes the users' conversations."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from pydantic import ValidationError

from servecap.cli.run_flags_open import DEFAULT_DURATION_S as DEFAULT_OPEN_DURATION_S
from servecap.core.config import parse_levels
from servecap.core.errors import UserInputError
from servecap.core.load_spec import SessionsLoad
from servecap.core.validation import user_input_error
from servecap.workload.think_time import parse_think_time, parse_turns

SESSION_FLAGS = {
    "users": "--users", "think": "--think-time", "turns": "--turns", "ramp_s": "--ramp-s",
    "duration_s": "--duration",
}
DEFAULTS = SessionsLoad(users=[1])

UsersOption = Annotated[
    str | None,
    typer.Option(help="Sessions: virtual users per level, e.g. 50,100,200 (multi-turn chat)"),
]
ThinkTimeSpecOption = Annotated[
    str,
    typer.Option(
        "--think-time",
        help="Sessions: think time between turns, s: exp:MEAN, fixed:S, "
        "lognormal:MEDIAN:SIGMA or uniform:LO:HI",
    ),
]
TurnsOption = Annotated[
    str, typer.Option(help="Sessions: user turns per conversation, N or uniform:LO:HI")
]
RampOption = Annotated[
    float, typer.Option(help="Sessions: seconds over which users start (their turns are warm-up)")
]
DurationOption = Annotated[
    float | None,
    typer.Option(help=f"Seconds per level: sessions measure this long (default "
                      f"{DEFAULTS.duration_s:g}); an open loop sends arrivals this long "
                      f"(default {DEFAULT_OPEN_DURATION_S:g})"),
]


def sessions_load(
    kw: dict[str, Any], concurrency_given: bool, endpoint: str, seed: int
) -> SessionsLoad | None:
    """The sessions plan the flags ask for, None without `--users`; bad input raises
    `UserInputError` (exit 2) before any load."""
    if kw["users"] is None:
        if kw["duration"] is not None or kw["ramp_s"]:
            raise UserInputError("--duration and --ramp-s shape sessions: they need --users")
        return None
    if concurrency_given:
        raise UserInputError("--users and --concurrency are two load models; give one of them")
    if endpoint != "chat":
        raise UserInputError("--users sends multi-turn chat messages: use --endpoint chat")
    think = parse_think_time(kw["think_time"], "--think-time")
    turns = parse_turns(kw["turns"], "--turns")
    users = parse_levels(kw["users"], "--users")
    duration = kw["duration"] if kw["duration"] is not None else DEFAULTS.duration_s
    try:
        return SessionsLoad(
            users=users, think=str(think), turns=str(turns), ramp_s=kw["ramp_s"],
            duration_s=duration, seed=seed,
        )
    except ValidationError as exc:
        raise user_input_error(exc, SESSION_FLAGS) from exc
