"""JSON that comes from outside servecap (a server's body, a user's file or flag): strict
and bounded, so the only failure is a `ValueError`.

Python's `json` turns a deeply nested value (`[[[[...`) into a `RecursionError`, which every
caller that catches `ValueError` lets through as a traceback, and it accepts `NaN` and
`Infinity`, which are not JSON (a server or a request body given them breaks). Every reader
of outside JSON goes through `loads` or `raw_decode` here: nesting past `MAX_DEPTH` and the
non-standard constants are a `json.JSONDecodeError` (a `ValueError`), like any other bad JSON.
"""

from __future__ import annotations

import json
from typing import Any

# Deeper than any dataset row, server info or request body servecap reads; shallow enough
# that the recursive code after a parse (redaction, trimming, pydantic) stays far from
# Python's recursion limit.
MAX_DEPTH = 64


class _Constant(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise _Constant(f"{name} is not JSON (use a number or null)")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def loads(data: str | bytes | bytearray, max_depth: int | None = MAX_DEPTH) -> Any:
    """The JSON value of `data`; `json.JSONDecodeError` for anything that is not strict JSON
    nested at most `max_depth` deep (None: only as deep as the parser itself reaches, for a
    hot reader whose values are type-checked flat, not walked)."""
    text = data.decode("utf-8-sig") if isinstance(data, bytes | bytearray) else data
    value, end = raw_decode(text.strip(), max_depth)
    if end != len(text.strip()):
        raise json.JSONDecodeError("Extra data", text.strip(), end)
    return value


def raw_decode(text: str, max_depth: int | None = MAX_DEPTH) -> tuple[Any, int]:
    """`json.JSONDecoder.raw_decode` made strict and bounded (see the module docstring)."""
    try:
        value, end = _DECODER.raw_decode(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None
    except _Constant as exc:
        raise json.JSONDecodeError(str(exc), text, 0) from None
    if max_depth is not None and not within_depth(value, max_depth):
        raise json.JSONDecodeError(f"nested more than {max_depth} deep", text, 0)
    return value, end


def within_depth(value: Any, max_depth: int = MAX_DEPTH) -> bool:
    """Whether `value`'s lists and objects nest at most `max_depth` deep (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > max_depth:
            return False
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return True
