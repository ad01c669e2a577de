"""What a level is: its `LevelKey` (load kind and value) and how each kind presents itself.

A level of a closed loop is `c=32`; an open loop's will be `rate=4/s`, a sessions run's
`users=400`. Records, summaries, capacity, analysis, the report and the app key on this,
never on a bare concurrency int. A new load kind adds one entry to `LEVEL_KINDS` (its
prefix, unit, axis title and methodology text), and nothing that presents levels changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema


@dataclass(frozen=True, slots=True)
class LevelKind:
    """How one load kind names and explains its levels."""

    prefix: str  # in the key's text: "c" -> "c=32"
    unit: str  # after the value: "" -> "c=32", "/s" -> "rate=4/s"
    quantity: str  # the value's name, as a column or an axis: "concurrency"
    axis_title: str  # a chart's x axis
    mode: str  # short label of the load model: "closed loop"
    methodology: str  # one sentence for a report's methodology section


LEVEL_KINDS: dict[str, LevelKind] = {
    "closed": LevelKind(
        prefix="c",
        unit="",
        quantity="concurrency",
        axis_title="concurrency (c)",
        mode="closed loop",
        methodology=(
            "closed loop: c streams, each sends its next request when its last one ends "
            "(the seed's model of c active users)"
        ),
    ),
    "fixed": LevelKind(
        prefix="fixed",
        unit="",
        quantity="schedule",
        axis_title="fixed schedule (level)",
        mode="fixed schedule",
        methodology="fixed schedule: each request is sent at a given target time",
    ),
    "replay": LevelKind(
        prefix="speed",
        unit="x",
        quantity="trace speed",
        axis_title="trace speed (x recorded)",
        mode="trace replay",
        methodology=(
            "trace replay: each trace row is sent at its recorded offset divided by the "
            "speed, with its recorded input length and asking for its recorded output length"
        ),
    ),
    "sessions": LevelKind(
        prefix="users",
        unit="",
        quantity="users",
        axis_title="virtual users (N)",
        mode="sessions",
        methodology=(
            "sessions: N virtual users, each sends a chat turn with its conversation's "
            "history, reads the whole answer, thinks, and sends the next turn"
        ),
    ),
    "open": LevelKind(
        prefix="rate",
        unit="/s",
        quantity="offered rate (requests/s)",
        axis_title="offered rate (requests/s)",
        mode="open loop",
        methodology=(
            "open loop: requests arrive at a given rate on absolute target times, whether or "
            "not earlier ones have ended (latency and TTFT are also measured from each "
            "request's target time, free of coordinated omission)"
        ),
    ),
}

CLOSED = "closed"


@dataclass(frozen=True, order=True, slots=True)
class LevelKey:
    """One level: its load kind and value. Orders by kind, then value."""

    kind: str
    value: int | float

    def __str__(self) -> str:
        spec = LEVEL_KINDS.get(self.kind)
        prefix, unit = (spec.prefix, spec.unit) if spec else (self.kind, "")
        return f"{prefix}={format_value(self.value)}{unit}"

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

    @property
    def info(self) -> LevelKind:
        return LEVEL_KINDS[self.kind]

    @property
    def is_closed(self) -> bool:
        return self.kind == CLOSED

    @classmethod
    def closed(cls, concurrency: int) -> LevelKey:
        return cls(CLOSED, concurrency)

    @classmethod
    def parse(cls, text: str) -> LevelKey:
        """The key from its text form (`c=32`, `fixed=2`); a bare integer is a concurrency."""
        text = text.strip()
        if text.isdigit():
            return cls.closed(int(text))
        prefix, sep, rest = text.partition("=")
        for kind, spec in LEVEL_KINDS.items():
            if sep and prefix == spec.prefix and rest.endswith(spec.unit):
                number = rest[: len(rest) - len(spec.unit)] if spec.unit else rest
                return cls(kind, _number(number))
        raise ValueError(f"not a level key: {text!r}")


def format_value(value: int | float) -> str:
    """`32`, not `32.0`; `2.5` as it is."""
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() else value


def key_fields(key: LevelKey) -> dict[str, Any]:
    """How a key is written into a stored row (a record or a summary).

    The closed kind keeps today's file format: its rows carry `concurrency` and nothing
    more, so run directories written before keys existed read back unchanged. Every other
    kind writes its key's text in `level`.
    """
    if key.is_closed:
        return {"concurrency": int(key.value)}
    return {"level": str(key)}


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
    spec = keys[0].info
    return f"{spec.prefix}={','.join(format_value(k.value) for k in keys)}{spec.unit}"


def bound_text(key: LevelKey, op: str) -> str:
    """A range by one level: `c<=8`, `c>=32`."""
    return f"{key.info.prefix}{op}{format_value(key.value)}{key.info.unit}"
