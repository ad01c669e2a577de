"""The load kinds servecap knows: one line each in `KIND_MODULES`, nothing else to edit.

Each module under `servecap.kinds` named here defines `KIND` (its `LoadKind`), its pydantic
load model and its level types. Everything else asks this registry: the kind that owns a
level key (`kind_of`), the load model a stored `load` reads as (`LoadSpec`, `parse_load`),
and the level types that travel to worker processes (`level_type`). A test may `register` a
kind of its own in `KINDS`; everything here looks it up at call time.
"""

from __future__ import annotations

import importlib
from typing import Annotated, Any

from pydantic import PlainSerializer, PlainValidator

from servecap.core.errors import bad_setting
from servecap.core.level_key import LevelKey
from servecap.kinds.base import LevelSpec, LoadKind, LoadPlan
from servecap.kinds.planned import PlannedLevel

KIND_MODULES: tuple[str, ...] = (
    "closed", "fixed", "replay", "sessions", "open_loop", "rate_shape", "agents",
)
# The kind of a run that names no load plan: the seed's concurrency sweep.
DEFAULT_KIND = "closed"


def _load_kinds() -> dict[str, LoadKind]:
    kinds: dict[str, LoadKind] = {}
    for name in KIND_MODULES:
        kind: LoadKind = importlib.import_module(f"servecap.kinds.{name}").KIND
        register(kind, kinds)
    return kinds


def register(kind: LoadKind, kinds: dict[str, LoadKind]) -> None:
    """Add `kind` to `kinds`, refusing a name or key prefix another kind already has."""
    for other in kinds.values():
        if kind.name == other.name or kind.text.prefix == other.text.prefix:
            raise ValueError(f"load kind {kind.name!r} clashes with {other.name!r}")
    kinds[kind.name] = kind


KINDS: dict[str, LoadKind] = _load_kinds()


def kind_of(key: LevelKey) -> LoadKind:
    """The kind that owns `key` (by its prefix and unit)."""
    for kind in KINDS.values():
        if kind.owns(key):
            return kind
    raise ValueError(f"no load kind has levels like {key}")


def kind_named(name: str) -> LoadKind:
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"unknown load kind {name!r} ({', '.join(KINDS)})") from None


def load_from_text(text: str, seed: int = 0) -> LoadPlan:
    """A load from its text form `PREFIX=SPEC` (`c=1,2,4`, `users=50,100`): the kind whose
    levels are named PREFIX builds it from SPEC (`LoadPlan.from_text`)."""
    prefix, sep, spec = text.strip().partition("=")
    kind = next((k for k in KINDS.values() if k.text.prefix == prefix.strip()), None)
    if not sep or kind is None or not kind.text.example:
        forms = ", ".join(k.text.example for k in KINDS.values() if k.text.example)
        raise bad_setting("load", f"{text.strip()[:80]!r}: expected one of {forms}", "invalid ")
    return kind.load.from_text(spec.strip(), seed)


def level_type(wire_name: str) -> type[LevelSpec]:
    """The level class a worker message names (`LevelSpec.WIRE`)."""
    types = {cls.WIRE: cls for kind in KINDS.values() for cls in kind.levels}
    types[PlannedLevel.WIRE] = PlannedLevel
    return types[wire_name]


def parse_load(data: Any) -> LoadPlan:
    """A stored or given `load` as its kind's model, chosen by its `kind` (a ValueError, or
    pydantic's ValidationError, names what is wrong)."""
    if isinstance(data, LoadPlan):
        return data
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        raise ValueError("a load plan is an object with a `kind`")
    return kind_named(data["kind"]).load.model_validate(data)


def _dump(load: LoadPlan) -> dict[str, Any]:
    return load.model_dump(mode="json")


# The union of every registered kind's load model, as a pydantic field type: dispatched on
# `kind` when validated, so a kind registered later (a test's own) is read like the others.
LoadSpec = Annotated[LoadPlan, PlainValidator(parse_load), PlainSerializer(_dump)]
