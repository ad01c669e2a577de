"""What every command shares: one clear message and exit 2 for bad input."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, ParamSpec, TypeVar

import typer
from pydantic import ValidationError

from servecap.core.config import SLO
from servecap.core.errors import ServecapError, UserInputError
from servecap.core.text import printable
from servecap.core.validation import user_input_error

P = ParamSpec("P")
R = TypeVar("R")

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


def fail_input(message: str) -> typer.Exit:
    """Print `error: message` to stderr; return the Exit(2) to raise."""
    print(f"error: {printable(message)}", file=sys.stderr)  # may quote server text
    return typer.Exit(EXIT_BAD_INPUT)


def user_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn servecap's own errors into one line on stderr and exit status 2, no traceback."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except UserInputError as exc:
            raise fail_input(str(exc)) from None
        except ServecapError as exc:
            print(f"error: {printable(exc)}", file=sys.stderr)
            raise typer.Exit(1) from None

    return wrapper


# What the SLO flags set, by the model's field names: validation messages name the flag.
SLO_FLAGS = {
    "ttft_ms": "--ttft-slo-ms", "tps": "--tps-slo", "statistic": "--stat",
    "think_time_s": "--think-time-s",
}
SLO_DEFAULTS = SLO()


class StatChoice(StrEnum):
    """`--stat`: the statistic the SLO judges (the values of `core.config.Statistic`)."""

    p90 = "p90"
    mean = "mean"


TtftSloOption = Annotated[float, typer.Option(help="TTFT objective, ms")]
TpsSloOption = Annotated[float, typer.Option(help="Per-user TPS objective, tok/s")]
ThinkTimeOption = Annotated[float, typer.Option(help="User think time, s")]
StatOption = Annotated[StatChoice, typer.Option(help="p90 (tail) or mean")]


def slo_from_flags(ttft_ms: float, tps: float, stat: StatChoice, think_time_s: float) -> SLO:
    """The SLO the flags ask for; a bad value is a `UserInputError` naming its flag."""
    try:
        return SLO(ttft_ms=ttft_ms, tps=tps, statistic=stat.value, think_time_s=think_time_s)
    except ValidationError as exc:
        raise user_input_error(exc, SLO_FLAGS) from None
