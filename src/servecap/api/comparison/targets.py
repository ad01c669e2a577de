"""A comparison's targets: `NAME=BASE_URL` or `NAME=sim:PROFILE[*SLOWDOWN]`, checked up front.

A simulator target is started by `servecap compare` itself on a free loopback port, as its
own process, for tests and the demo; `*1.1` runs it 10% slower (every step costs 1.1x: the
simulator's time scale is 1 / 1.1), the known difference a test can look for.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from servecap.core import json_input
from servecap.core.config import validate_base_url
from servecap.core.cost import MAX_GPUS
from servecap.core.errors import SettingError, bad_setting
from servecap.core.urls import public_url

SIM_PREFIX = "sim:"


@dataclass
class Target:
    """One deployment to compare: where it is, and its own model and extra body."""

    name: str
    base_url: str | None = None
    sim_profile: str | None = None
    sim_slowdown: float = 1.0
    model: str | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)
    gpus: float | None = None  # `--target-gpus`: over `--gpus` for this target's cost

    def describe(self) -> str:
        if self.sim_profile:
            slow = f"*{self.sim_slowdown:g}" if self.sim_slowdown != 1.0 else ""
            return f"{SIM_PREFIX}{self.sim_profile}{slow}"
        return public_url(self.base_url or "")  # stored in comparison.json: no credentials


def parse_target(text: str) -> Target:
    """`NAME=http://host:port/v1` or `NAME=sim:PROFILE[*SLOWDOWN]`."""
    name, sep, where = text.partition("=")
    name, where = name.strip(), where.strip()
    if not sep or not name or not where:
        raise bad_setting("target", f"{text!r}: expected NAME=BASE_URL or NAME=sim:PROFILE",
                          "invalid ")
    if not where.startswith(SIM_PREFIX):
        return Target(name=name, base_url=validate_base_url(where))
    profile, star, factor = where[len(SIM_PREFIX):].partition("*")
    slowdown = 1.0
    if star:
        try:
            slowdown = float(factor)
        except ValueError:
            slowdown = 0.0
        if not slowdown > 0:
            raise bad_setting("target", f"{text!r}: the slowdown after * must be > 0",
                              "invalid ")
    _check_profile(text, profile.strip())
    return Target(name=name, sim_profile=profile.strip(), sim_slowdown=slowdown)


def _check_profile(text: str, profile: str) -> None:
    from servecap.sim import ProfileError, load_profile

    try:
        load_profile(profile)
    except ProfileError as exc:
        raise bad_setting("target", f"{text!r}: {exc}", "invalid ") from None


def _per_target(items: Sequence[str], setting: str, names: set[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name.strip() not in names:
            raise SettingError(f"invalid {{{setting}}} {item!r}: expected NAME=VALUE for a "
                               "target named by {target}", setting, "target")
        out[name.strip()] = value.strip()
    return out


def build_targets(
    specs: Sequence[str], models: Sequence[str] = (), extra_bodies: Sequence[str] = (),
    gpus: Sequence[str] = (), command: str = "compare",
) -> list[Target]:
    """The targets from the flags: at least two, uniquely named (`command` says whose)."""
    targets = [parse_target(spec) for spec in specs]
    if len(targets) < 2:
        raise SettingError(f"{command} needs at least two {{target}} NAME=BASE_URL (got "
                           f"{len(targets)})", "target")
    dupes = sorted(n for n, k in Counter(t.name for t in targets).items() if k > 1)
    if dupes:
        raise SettingError(f"duplicate {{target}} name(s): {', '.join(dupes)}", "target")
    names = {t.name for t in targets}
    for target_name, model in _per_target(models, "target_model", names).items():
        next(t for t in targets if t.name == target_name).model = model
    for target_name, body in _per_target(extra_bodies, "target_extra_body", names).items():
        next(t for t in targets if t.name == target_name).extra_body = _json_object(body)
    for target_name, count in _per_target(gpus, "target_gpus", names).items():
        next(t for t in targets if t.name == target_name).gpus = _gpus(count)
    return targets


def _gpus(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= MAX_GPUS:
        raise bad_setting("target_gpus", f"{text[:40]!r}: a GPU count above 0", "invalid ")
    return value


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json_input.loads(text)
    except json.JSONDecodeError as exc:
        raise bad_setting("target_extra_body", f"not JSON ({exc.msg})", "invalid ") from None
    if not isinstance(value, dict):
        raise bad_setting("target_extra_body", "expected a JSON object", "invalid ")
    return value


def check_models(models: dict[str, str], allow_different: bool) -> None:
    """Targets serving different models are not comparable unless the user says so."""
    if allow_different or len(set(models.values())) <= 1:
        return
    served = ", ".join(f"{name}: {model}" for name, model in models.items())
    raise SettingError(
        f"the targets serve different models ({served}); set {{allow_different_models}} "
        "to compare them anyway", "allow_different_models"
    )
