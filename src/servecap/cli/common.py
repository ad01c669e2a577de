"""What every command shares: one clear message and exit 2 for bad input."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path, PurePath
from typing import Annotated, ParamSpec, TypeVar

import typer
from pydantic import ValidationError

from servecap.core.config import SLO
from servecap.core.errors import ServecapError, UserInputError, said
from servecap.core.text import printable
from servecap.core.validation import user_input_error

P = ParamSpec("P")
R = TypeVar("R")

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


# Settings whose flag is not `--` and the setting's name with dashes (`think_time` ->
# `--think-time`): the api names settings, the CLI says flags.
FLAG_OF_SETTING: dict[str, str] = {"statistic": "--stat", "out_dir": "--out",
                                   "agents_duration_s": "--agents-duration"}


def flag_of(setting: str) -> str:
    """The flag that sets `setting`, as an error message names it."""
    return FLAG_OF_SETTING.get(setting, "--" + setting.replace("_", "-"))


def fail_input(message: str) -> typer.Exit:
    """Print `error: message` to stderr; return the Exit(2) to raise."""
    print(f"error: {printable(message)}", file=sys.stderr)  # may quote server text
    return typer.Exit(EXIT_BAD_INPUT)


def user_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn servecap's own errors into one line on stderr and exit status 2, no traceback.

    Every command goes through here, so two classes of bad input are caught once for all of
    them: an argument that is not UTF-8 (the shell passes bytes; Python keeps the bad ones as
    lone surrogates, which fail much later, when written), refused before the command runs;
    and a config model that refuses a value, whichever flag built it, named by its flag."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            check_utf8(kwargs)
            return func(*args, **kwargs)
        except UserInputError as exc:
            raise fail_input(said(exc, flag_of)) from None
        except ValidationError as exc:
            raise fail_input(str(user_input_error(exc, flag_names(exc)))) from None
        except ServecapError as exc:
            print(f"error: {printable(exc)}", file=sys.stderr)
            raise typer.Exit(1) from None

    return wrapper


def _surrogates(value: object) -> bool:
    if isinstance(value, str | PurePath):
        try:
            str(value).encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, list | tuple):
        return any(_surrogates(v) for v in value)
    return False


def check_utf8(kwargs: dict[str, object]) -> None:
    """Refuse an argument that is not UTF-8 text (naming its flag, never echoing it)."""
    for name, value in kwargs.items():
        if _surrogates(value):
            raise UserInputError(f"--{name.replace('_', '-')} is not valid UTF-8 text")


def flag_names(exc: ValidationError) -> dict[str, str]:
    """A model field's flag by its own name (`prefix_groups` -> `--prefix-groups`), for a
    model whose command has no map of its own."""
    names = {}
    for problem in exc.errors():
        loc = tuple(problem["loc"])
        if loc:
            names[".".join(str(p) for p in loc)] = "--" + str(loc[-1]).replace("_", "-")
    return names


def out_dir(text: str | PurePath) -> Path:
    """An `--out` value: a path, never empty (`--out ''` wrote into the current directory
    as if `.` had been given). Typer passes a default through here as the Path it is."""
    if isinstance(text, PurePath):
        return Path(text)
    if not text.strip():
        raise typer.BadParameter("an empty path: name a directory ('.' for the current one)")
    return Path(text)


# What the SLO flags set, by the model's field names: validation messages name the flag.
SLO_FLAGS = {
    "ttft_ms": "--ttft-slo-ms", "tps": "--tps-slo", "statistic": "--stat",
    "think_time_s": "--think-time-s", "task_time_s": "--task-time-slo-s",
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
TaskTimeOption = Annotated[float, typer.Option(
    "--task-time-slo-s", help="Agents levels: a whole task's time objective (on --stat), s")]


def slo_from_flags(
    ttft_ms: float, tps: float, stat: StatChoice, think_time_s: float,
    task_time_s: float = SLO_DEFAULTS.task_time_s,
) -> SLO:
    """The SLO the flags ask for; a bad value is a `UserInputError` naming its flag."""
    try:
        return SLO(ttft_ms=ttft_ms, tps=tps, statistic=stat.value, think_time_s=think_time_s,
                   task_time_s=task_time_s)
    except ValidationError as exc:
        raise user_input_error(exc, SLO_FLAGS) from None
