"""What a level is: its `LevelKey`, a prefix, a value and a unit (`c=32`, `rate=4/s`).

A key describes itself, so that this layer needs no list of load kinds: the kind that owns
a prefix (and everything a kind means) is `servecap.kinds`' to say. Records, summaries,
capacity, analysis, the report and the app key on this, never on a bare concurrency int.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

# Stored rows of this prefix keep the file format from before keys existed: the key lives in
# a `concurrency` column (`key_fields`), and a bare integer reads as one (`LevelKey.parse`).
CONCURRENCY_PREFIX = "c"
_KEY_TEXT = re.compile(r"([a-z_]+)=([-+0-9.eE]+)(\S*)")


@dataclass(frozen=True, order=True, slots=True)
class LevelKey:
    """One level: its kind's prefix, its value and its kind's unit. Orders by prefix, then
    value (the kinds' prefixes order as their names did: c, fixed, rate, speed, users)."""

    prefix: str
    value: int | float
    unit: str = ""

    def __str__(self) -> str:
        return f"{self.prefix}={format_value(self.value)}{self.unit}"

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        """In a pydantic model a key is its text (`"c=32"`); an int reads as a concurrency."""
        return core_schema.no_info_plain_validator_function(
            cls.coerce, serialization=core_schema.plain_serializer_function_ser_schema(str)
        )

    @classmethod
    def coerce(cls, value: Any) -> LevelKey:
        if isinstance(value, LevelKey):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return cls.closed(value)
        if isinstance(value, str):
            return cls.parse(value)
        raise ValueError(f"not a level key: {value!r}")

    @classmethod
    def closed(cls, concurrency: int) -> LevelKey:
        """The key a stored `concurrency` column names (`c=32`)."""
        return cls(CONCURRENCY_PREFIX, concurrency)

    @classmethod
    def parse(cls, text: str) -> LevelKey:
        """The key from its text form (`c=32`, `rate=4/s`); a bare integer is a concurrency."""
        text = text.strip()
        if text.isdigit():
            return cls.closed(int(text))
        match = _KEY_TEXT.fullmatch(text)
        if match is None:
            raise ValueError(f"not a level key: {text!r}")
        try:
            return cls(match[1], _number(match[2]), match[3])
        except ValueError:
            raise ValueError(f"not a level key: {text!r}") from None


def format_value(value: int | float) -> str:
    """`32`, not `32.0`; `2.5` as it is."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() else value


def key_fields(key: LevelKey) -> dict[str, Any]:
    """How a key is written into a stored row (a record or a summary).

    Keys of `CONCURRENCY_PREFIX` keep the file format from before keys existed: their rows
    carry `concurrency` and nothing more, so old run directories read back unchanged. Every
    other key is written as its text in `level`.
    """
    if key.prefix == CONCURRENCY_PREFIX and not key.unit:
        return {"concurrency": int(key.value)}
    return {"level": str(key)}


def stored_name(key: LevelKey) -> str:
    """The key as a name in run.json's per-level maps: `64` for a key stored in the
    `concurrency` column (as before keys existed), else its text (`rate=4/s`)."""
    fields = key_fields(key)
    return str(fields["concurrency"]) if "concurrency" in fields else str(key)


def key_from_fields(concurrency: int | None, level: str | None) -> LevelKey:
    """The inverse of `key_fields`."""
    if level:
        return LevelKey.parse(level)
    if concurrency is None:
        raise ValueError("a level needs `concurrency` or `level`")
    return LevelKey.closed(concurrency)


def keys_text(keys: list[LevelKey]) -> str:
    """Several levels of one kind in one phrase: `c=1,2,4`."""
    if not keys:
        return ""
    first = keys[0]
    return f"{first.prefix}={','.join(format_value(k.value) for k in keys)}{first.unit}"


def bound_text(key: LevelKey, op: str) -> str:
    """A range by one level: `c<=8`, `c>=32`."""
    return f"{key.prefix}{op}{format_value(key.value)}{key.unit}"
