"""Write a profile as TOML (the subset profiles use: strings, numbers, booleans, tables).

The parameters are written one sub-table per mechanism (``[params.batching]``), so a reader
sees which mechanism each number sets; profiles with a flat ``[params]`` load the same.
"""

from __future__ import annotations

import json
import math
from typing import Any

from servecap.sim.model.params import MECHANISMS
from servecap.sim.profiles import Profile


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError("TOML profile values must be finite")
        return repr(round(v, 6))
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string literal is a valid TOML basic string
    raise TypeError(f"cannot write {type(v).__name__} to a profile")


def _key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() else json.dumps(k)


def _table(lines: list[str], path: str, data: dict[str, Any]) -> None:
    scalars = {k: v for k, v in data.items() if v is not None and not isinstance(v, dict)}
    tables = {k: v for k, v in data.items() if isinstance(v, dict)}
    if path:
        lines.append(f"\n[{path}]")
    lines.extend(f"{_key(k)} = {_value(v)}" for k, v in scalars.items())
    for k, v in tables.items():
        _table(lines, f"{path}.{_key(k)}" if path else _key(k), v)


def profile_to_toml(profile: Profile, header: str = "") -> str:
    """The profile as TOML text, with ``header`` as leading ``#`` comment lines."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    data = profile.model_dump(exclude_defaults=False)
    flat = data.pop("params")
    grouped = {
        m: {k: flat[k] for k in names if flat[k] is not None} for m, names in MECHANISMS.items()
    }
    data = {**data, "params": {m: table for m, table in grouped.items() if table}}
    _table(lines, "", _params_first(data))
    return "\n".join(lines).lstrip("\n") + "\n"


def _params_first(data: dict[str, Any]) -> dict[str, Any]:
    """Top-level scalars, then ``params``, then the other tables (the order profiles had)."""
    order = [k for k in data if not isinstance(data[k], dict)] + ["params"]
    return {k: data[k] for k in order + [k for k in data if k not in order]}
