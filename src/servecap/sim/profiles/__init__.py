"""Simulator profiles: model parameters plus the deployment a profile stands for.

Built-in profiles are TOML files next to this module; user profiles are TOML or JSON files
with the same shape (see ``Profile``). Loading never evaluates code.
"""

from __future__ import annotations

import json
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from servecap.sim.model.params import ModelParams


class ProfileError(ValueError):
    """A profile name or file that cannot be used; the message says why."""


class Deployment(BaseModel):
    """The real deployment a profile models (carried into /version and run metadata)."""

    model_config = ConfigDict(extra="forbid")

    engine: str = "servecap-sim"
    command: str = ""
    flags: dict[str, str] = Field(default_factory=dict)
    speculative: dict[str, str] = Field(default_factory=dict)
    notes: str = ""


class Profile(BaseModel):
    """A named simulator configuration."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=100)
    description: str = ""
    model_id: str = "servecap-sim"
    # the first ``reasoning_tokens`` output tokens are sent as ``reasoning_content``
    reasoning_tokens: int = Field(0, ge=0)
    # how often a chat request with `tools` and `tool_choice` auto is answered with a tool
    # call (`server.tool_calls`; `required` or a named function always is)
    tool_call_probability: float = Field(0.0, ge=0.0, le=1.0)
    params: ModelParams = Field(default_factory=lambda: ModelParams.model_validate({}))
    deployment: Deployment = Field(default_factory=Deployment)
    # how the profile was fitted (source, errors); informational
    calibration: dict[str, str | float] = Field(default_factory=dict)


def builtin_names() -> list[str]:
    """Names of the profiles shipped with servecap, sorted."""
    root = resources.files(__name__)
    return sorted(p.name[:-5] for p in root.iterdir() if p.name.endswith(".toml"))


def _parse(text: str, suffix: str, origin: str) -> dict[str, Any]:
    try:
        data = json.loads(text) if suffix == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        kind = "JSON" if suffix == ".json" else "TOML"
        raise ProfileError(f"profile {origin}: not valid {kind}: {exc}") from None
    if not isinstance(data, dict):
        raise ProfileError(f"profile {origin}: expected a table/object at the top level")
    return data


def profile_from_dict(data: dict[str, Any], origin: str = "<dict>") -> Profile:
    """Validate a parsed profile; errors become a ``ProfileError`` naming the bad field."""
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "(top level)"
        raise ProfileError(f"profile {origin}: field {where}: {first['msg']}") from None


def load_profile_file(path: str | Path) -> Profile:
    """Load a user profile from a ``.toml`` or ``.json`` file."""
    p = Path(path)
    if p.suffix.lower() not in (".toml", ".json"):
        raise ProfileError(f"profile {p}: expected a .toml or .json file")
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProfileError(f"profile {p}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise ProfileError(f"profile {p}: not UTF-8 text") from None
    data = _parse(text, p.suffix.lower(), str(p))
    data.setdefault("name", p.stem)
    return profile_from_dict(data, str(p))


def builtin_profile(name: str) -> Profile:
    """A shipped profile by name."""
    if name not in builtin_names():
        known = ", ".join(builtin_names())
        raise ProfileError(f"unknown profile {name!r}; built-in profiles: {known}")
    text = resources.files(__name__).joinpath(f"{name}.toml").read_text(encoding="utf-8")
    return profile_from_dict(_parse(text, ".toml", name), name)


def load_profile(name_or_path: str | Path) -> Profile:
    """A built-in profile by name, else a profile file by path."""
    s = str(name_or_path)
    if s in builtin_names():
        return builtin_profile(s)
    if s.lower().endswith((".toml", ".json")) or Path(s).exists():
        return load_profile_file(s)
    return builtin_profile(s)
