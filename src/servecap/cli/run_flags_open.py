"""`servecap run`'s open-loop flags: `--rate` and what shapes its arrivals and window."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from pydantic import ValidationError

from servecap.core.errors import UserInputError
from servecap.core.validation import user_input_error
from servecap.kinds.open_loop import (
    DEFAULT_DURATION_S,
    OPEN_COOLDOWN_S,
    OPEN_WARMUP_S,
    OpenLoad,
    parse_rates,
)

OPEN_FLAGS = {
    "rates": "--rate", "arrival": "--arrival", "burstiness": "--burstiness",
    "duration_s": "--duration", "requests": "--requests",
    "max_concurrency": "--max-concurrency", "warmup_s": "--warmup-s",
    "cooldown_s": "--cooldown-s",
}

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


def open_load(kw: dict[str, Any], concurrency_given: bool, seed: int) -> OpenLoad | None:
    """The open-loop plan the flags ask for, None without `--rate`; bad input raises
    `UserInputError` (exit 2) before any load."""
    if kw["rate"] is None:
        if kw["warmup_s"] is not None or kw["cooldown_s"] is not None:
            raise UserInputError("--warmup-s/--cooldown-s need --rate (an open loop)")
        return None
    if concurrency_given:
        raise UserInputError("--rate and --concurrency are two load models; give one of them")
    if kw["duration"] is not None and kw["requests"] is not None:
        raise UserInputError("give one of --duration and --requests, not both")
    duration = kw["duration"]
    if duration is None and kw["requests"] is None:
        duration = DEFAULT_DURATION_S
    window = {"warmup_s": kw["warmup_s"], "cooldown_s": kw["cooldown_s"]}
    try:
        return OpenLoad(
            rates=parse_rates(kw["rate"]), arrival=kw["arrival"], burstiness=kw["burstiness"],
            duration_s=duration, requests=kw["requests"],
            max_concurrency=kw["max_concurrency"], seed=seed,
            **{k: v for k, v in window.items() if v is not None},
        )
    except ValidationError as exc:
        raise user_input_error(exc, OPEN_FLAGS) from exc
