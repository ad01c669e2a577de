"""How every command presents itself: `--help` without type labels, usage errors on one line.

Typer prints each parameter's Python annotation as a label (`<bool>` beside a flag that takes
no value, `<list[str]>` beside a repeatable option, `<list[Path]>` beside the runs). The help
text and the default already say what a value is, so an option without an explicit `metavar`
gets an empty one, and an argument (named by its metavar) no label.

A value typer itself rejects (`--stat p99`, `--rounds abc`, an unknown option) is bad input
like any other: one `error:` line and exit status 2, not a framed usage panel.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from servecap.cli.common import fail_input

try:
    from typer._click.exceptions import UsageError
except ImportError:  # pragma: no cover - typer before it vendored click
    from click.exceptions import UsageError  # type: ignore[assignment]


def _no_label(ctx: Any) -> None:
    return None


def _unlabel(params: list[Any]) -> list[Any]:
    for param in params:
        kind = getattr(param, "param_type_name", "")
        if kind == "option" and param.metavar is None:
            param.metavar = ""  # an option's label is its metavar when it has one
        elif kind == "argument":
            # an argument's metavar is its name in the usage line, so typer's label column
            # is switched off on the instance instead
            param.display_type_rich = _no_label
    return params


def _is_help(exc: UsageError) -> bool:
    # `servecap` alone prints its help through a usage error; that one stays as it is
    return type(exc).__name__ == "NoArgsIsHelpError"


def _parse_or_fail(parse: Any, ctx: Any, args: list[str]) -> list[str]:
    try:
        rest: list[str] = parse(ctx, args)
    except UsageError as exc:
        if _is_help(exc):
            raise
        raise fail_input(exc.format_message()) from None
    return rest


class PlainCommand(TyperCommand):
    """A command with label-free help and one-line usage errors."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _unlabel(super().get_params(ctx))

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return _parse_or_fail(super().parse_args, ctx, args)


class PlainGroup(TyperGroup):
    """A group (`servecap`, `servecap sim`) with label-free help and one-line usage errors."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _unlabel(super().get_params(ctx))

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return _parse_or_fail(super().parse_args, ctx, args)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except UsageError as exc:  # an unknown command, with typer's "did you mean"
            if _is_help(exc):
                raise
            message = exc.format_message()
            if message.startswith("No such command") and "Did you mean" not in message:
                # nothing close: name what there is rather than leave a newcomer guessing
                names = ", ".join(n for n, c in self.commands.items() if not c.hidden)
                message += f" The commands: {names} (--help says what each does)."
            raise fail_input(message) from None


def _chosen(cls: object, default: type, plain: type) -> Any:
    # typer's own class (or its "not set" placeholder) is replaced; a custom one is kept
    return plain if not isinstance(cls, type) or cls is default else cls


def plain_style(app: typer.Typer) -> typer.Typer:
    """Give every command and group under `app` this style; returns `app`."""
    app.info.cls = _chosen(app.info.cls, TyperGroup, PlainGroup)
    for command in app.registered_commands:
        command.cls = _chosen(command.cls, TyperCommand, PlainCommand)
    for group in app.registered_groups:
        group.cls = _chosen(group.cls, TyperGroup, PlainGroup)
        if group.typer_instance is not None:
            plain_style(group.typer_instance)
    return app
