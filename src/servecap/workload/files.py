"""Reading workload input files: whole text with the line of any bad byte, GC paused.

Contract: `read_text(name, what)` returns a file's text (UTF-8, a BOM dropped) or raises
`UserInputError` (unreadable: says what the file was for) / `DataFormatError` (not UTF-8,
naming the line). `json_line(where, line)` decodes one JSONL line, or raises
`DataFormatError` naming `where` and the column. `gc_paused()` holds off the cyclic
collector while many rows are built.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from servecap.core.errors import DataFormatError, UserInputError


def read_text(name: str, what: str) -> str:
    """The text of `name`, the `what` ("trace", "dataset") named in any error."""
    try:
        data = Path(name).read_bytes()
    except OSError as exc:
        raise UserInputError(f"{name}: cannot read the {what}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DataFormatError(f"{name}:{line}: not UTF-8 text (a binary file?)") from None


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic GC while a file loads: rows hold no cycles, and the collector's repeated
    passes over hundreds of thousands of fresh objects cost as much as the parsing."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# raw_decode skips json.loads' per-call checks and whitespace regexes (about 40% of a
# 100k-row load); the caller strips the line and rejects trailing data itself.
_raw_decode = json.JSONDecoder().raw_decode


def json_line(where: str, line: str) -> object:
    """The JSON value on one line; `where` (`file:line`) and the column name any error."""
    body = line.strip()
    indent = len(line) - len(line.lstrip())
    try:
        value, end = _raw_decode(body)
    except json.JSONDecodeError as exc:
        raise DataFormatError(
            f"{where}: column {indent + exc.colno}: not JSON ({exc.msg})"
        ) from None
    if end != len(body):
        rest = body[end:]
        column = indent + end + len(rest) - len(rest.lstrip()) + 1
        raise DataFormatError(f"{where}: column {column}: not JSON (data after the value)")
    return value
