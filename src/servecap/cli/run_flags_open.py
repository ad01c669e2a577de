"""`servecap run`'s open-loop flags: `--rate` and what shapes its arrivals and window (their
rules: `api.run.load_settings`)."""

from __future__ import annotations

from typing import Annotated

import typer

from servecap.kinds.open_loop import (
    OPEN_COOLDOWN_S,
    OPEN_WARMUP_S,
)

RateOption = Annotated[
    str | None,
    typer.Option(help="Open loop: offered rates, requests/s, one level each (e.g. 0.5,1,2,4)"),
]
ArrivalOption = Annotated[str, typer.Option(help="Open loop: poisson, constant or gamma")]
BurstinessOption = Annotated[
    float, typer.Option(help="Open loop: gamma shape K (1 = Poisson, < 1 burstier)")
]
RequestsOption = Annotated[
    int | None, typer.Option(help="Open loop: arrivals per level (instead of --duration)")
]
MaxConcurrencyOption = Annotated[
    int | None, typer.Option(help="Open loop: cap on requests in flight (waits are recorded)")
]
WarmupSOption = Annotated[
    float | None,
    typer.Option(help=f"Seconds of each level's start left out of its statistics "
                 f"(open loop default {OPEN_WARMUP_S:g})"),
]
CooldownSOption = Annotated[
    float | None,
    typer.Option(help=f"Seconds of each level's end left out of its statistics "
                 f"(open loop default {OPEN_COOLDOWN_S:g})"),
]

