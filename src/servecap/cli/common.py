"""What every command shares: one clear message and exit 2 for bad input."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer

from servecap.core.errors import ServecapError, UserInputError

P = ParamSpec("P")
R = TypeVar("R")

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


def fail_input(message: str) -> typer.Exit:
    """Print `error: message` to stderr; return the Exit(2) to raise."""
    print(f"error: {message}", file=sys.stderr)
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
            print(f"error: {exc}", file=sys.stderr)
            raise typer.Exit(1) from None

    return wrapper
