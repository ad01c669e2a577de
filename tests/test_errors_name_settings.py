"""Below the front ends, an error names a setting, never a CLI flag: the app shows these
messages too, and `--rate` means nothing on a form whose field is "Offered rates". A
message names its setting as `{setting}` (`core.errors.SettingError`); the CLI turns that
into the flag, the app into the label.

This scans every raise outside `cli/`, `ui/` and the simulator (an island with a CLI of
its own) for a string that spells a flag (`--name`), and shows the scan catches one."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "servecap"
FRONT_ENDS = ("cli", "ui", "sim")
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]+")


def _flags_raised(source: str) -> list[str]:
    """`line: flag` for each flag spelled in a raise statement's strings."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Raise) or node.exc is None:
            continue
        for part in ast.walk(node.exc):
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                found += [f"{node.lineno}: {flag}" for flag in FLAG.findall(part.value)]
    return found


def test_the_scan_catches_a_flag_in_a_raise() -> None:
    caught = _flags_raised('raise UserInputError(f"invalid --rate {x!r}: must be > 0")\n')
    assert caught == ["1: --rate"]
    assert not _flags_raised('raise bad_setting("rate", f"{x!r}: must be > 0", "invalid ")\n')


def test_no_error_below_the_front_ends_names_a_flag() -> None:
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path.relative_to(SRC).parts[0] in FRONT_ENDS:
            continue
        offenders += [f"{path.relative_to(SRC)}:{hit}"
                      for hit in _flags_raised(path.read_text(encoding="utf-8"))]
    assert not offenders, offenders
