"""`servecap run`'s sessions flags: `--users` and what shapes the users' conversations (their
rules: `api.run.load_settings`)."""

from __future__ import annotations

from typing import Annotated

import typer

from servecap.kinds.open_loop import DEFAULT_DURATION_S as DEFAULT_OPEN_DURATION_S
from servecap.kinds.sessions import SessionsLoad

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

