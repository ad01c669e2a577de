"""`servecap run`'s sessions flags: `--users` and what shapes the users' conversations."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from pydantic import ValidationError

from servecap.cli.run_flags_open import DEFAULT_DURATION_S as DEFAULT_OPEN_DURATION_S
from servecap.core.config import parse_levels
from servecap.core.errors import UserInputError
from servecap.core.validation import user_input_error
from servecap.kinds.sessions import SessionsLoad
from servecap.workload.think_time import (
    ALL_TURNS,
    TurnCount,
    parse_think_time,
    parse_turn_cap,
    parse_turns,
)

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
    str | None,
    typer.Option(help=f"Sessions: user turns per conversation, N or uniform:LO:HI (default "
                      f"{DEFAULTS.turns}); with --dataset a cap on each conversation's own "
                      "turns, or all (its default there)"),
]
RampOption = Annotated[
    float, typer.Option(help="Sessions: seconds of warm-up before the measured window "
                        "(users start as a steady population would send)")
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
    think = parse_think_time(kw["think_time"], "think_time")
    turns = _turns(kw["turns"], bool(kw.get("dataset")))
    users = parse_levels(kw["users"], "users")
    duration = kw["duration"] if kw["duration"] is not None else DEFAULTS.duration_s
    try:
        return SessionsLoad(
            users=users, think=str(think), turns=str(turns), ramp_s=kw["ramp_s"],
            duration_s=duration, seed=seed,
        )
    except ValidationError as exc:
        raise user_input_error(exc, SESSION_FLAGS) from exc


def _turns(text: str | None, dataset: bool) -> str | TurnCount:
    """The turn spec: with a dataset `all` (each conversation's own turns) unless capped."""
    if text is None:
        return ALL_TURNS if dataset else DEFAULTS.turns
    if not dataset:
        if text.strip().lower() == ALL_TURNS:
            raise UserInputError("--turns all takes each dataset conversation's own turns: "
                                 "it needs --dataset")
        return parse_turns(text, "turns")
    cap = parse_turn_cap(text, "turns")
    return ALL_TURNS if cap is None else cap
