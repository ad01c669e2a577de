"""Pydantic validation errors as servecap's one-line messages.

Every front end (CLI flags, the app's form) and every reader (run files, summaries) turns a
`ValidationError` into one line. The line names the problem where the user can act on it: a
front end passes its map from model fields to its own names (`rounds` -> `--rounds`), so the
message says the flag, not the internal field. The input value is never echoed: it may be
a secret or a megabyte of garbage.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import ValidationError

from servecap.core.errors import SettingError, UserInputError

MAX_MESSAGE_CHARS = 200


def problem_location(loc: tuple[int | str, ...], names: Mapping[str, str] | None = None) -> str:
    """The dotted field path, or the front end's name for it (`client.timeout_s` -> `--timeout`)."""
    where = ".".join(str(p) for p in loc)
    if names:
        return names.get(where, where)
    return where


def first_problem(
    exc: ValidationError, names: Mapping[str, str] | None = None, whole: str = "document"
) -> str:
    """The first validation problem on one line, `where: message (and N more)`."""
    problems = exc.errors()
    if not problems:
        return "invalid data"
    where = problem_location(tuple(problems[0]["loc"]), names) or whole
    # "Value error, " is pydantic's wrapper around a validator's own message
    message = " ".join(str(problems[0]["msg"]).removeprefix("Value error, ").split())
    message = message[:MAX_MESSAGE_CHARS]
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{where}: {message}{more}"


def setting_error(
    exc: ValidationError, settings: Mapping[str, str] | None = None, whole: str = "input"
) -> UserInputError:
    """A model the api built from settings refused a value: the error names the setting
    (`settings` maps the model's fields to the settings that set them; by default a field is
    its own setting), for each front end to say in its own words (`SettingError`)."""
    problems = exc.errors()
    field = ".".join(str(p) for p in problems[0]["loc"]) if problems else ""
    loc = (settings or {}).get(field, field)
    if not loc or not loc.replace("_", "").isalnum():
        return user_input_error(exc, None, whole)
    message = " ".join(str(problems[0]["msg"]).removeprefix("Value error, ").split())
    return SettingError(f"invalid {{{loc}}}: {message[:MAX_MESSAGE_CHARS]}", loc)


def user_input_error(
    exc: ValidationError, names: Mapping[str, str] | None = None, whole: str = "input"
) -> UserInputError:
    """The `UserInputError` (exit 2) a front end raises for a model it could not build."""
    return UserInputError(f"invalid {first_problem(exc, names, whole)}")
