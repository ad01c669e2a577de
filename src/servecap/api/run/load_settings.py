"""The settings that choose a run's load, and their rules: one place for both front ends.

A run's load is one of the load models: the closed sweep (`concurrency`), the open loop
(`rate`, shaped by `arrival`, `duration` or `requests`, ...), sessions of users (`users`,
shaped by `think_time`, `turns`, `ramp_s`, `duration`), agents (`agents`, shaped by
`agent_depth`, `tool_latency`, `tool_result_tokens`, `tools`, `think_time` between tasks,
`ramp_s`, `duration`: `api.run.agent_settings`), a trace replay (`trace`, in the workload
settings), or any kind by its text form (`load`). `load_fields` turns the settings
into the run config's fields, refusing two load models at once and any setting the chosen
model would ignore. The CLI builds `LoadSettings` from its flags and the app from its form;
errors name the settings (`SettingError`), each front end in its own words.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from servecap.api.run.agent_settings import AGENTS, AgentSettings, agents_load
from servecap.api.run.workload_options import WorkloadFlags, config_fields
from servecap.core.config import parse_levels
from servecap.core.errors import SettingError
from servecap.core.validation import setting_error
from servecap.kinds.base import LoadPlan
from servecap.kinds.open_loop import DEFAULT_DURATION_S as OPEN_DURATION_S
from servecap.kinds.open_loop import OpenLoad, parse_rates
from servecap.kinds.registry import load_from_text
from servecap.kinds.sessions import SessionsLoad
from servecap.workload.think_time import (
    ALL_TURNS,
    TurnCount,
    parse_think_time,
    parse_turn_cap,
    parse_turns,
)

SESSIONS = SessionsLoad(users=[1])  # the sessions model's defaults
# The models' fields by the settings that set them (their errors name the setting).
OPEN_SETTINGS = {"rates": "rate", "duration_s": "duration"}
SESSION_SETTINGS = {"think": "think_time", "duration_s": "duration"}


@dataclass(frozen=True)
class LoadSettings:
    """The load and workload settings as given (None: not given)."""

    workload: WorkloadFlags
    endpoint: str = "chat"
    seed: int = 0
    concurrency: str | None = None
    users: str | None = None
    think_time: str = SESSIONS.think
    turns: str | None = None
    ramp_s: float = SESSIONS.ramp_s
    duration: float | None = None  # one setting: sessions' and the open loop's
    rate: str | None = None
    arrival: str = "poisson"
    burstiness: float = 1.0
    requests: int | None = None
    max_concurrency: int | None = None
    warmup_s: float | None = None
    cooldown_s: float | None = None
    load: str | None = None
    agent: AgentSettings = AGENTS  # the agents' own settings (`agents` and what shapes them)

    def other_than_closed(self) -> str | None:
        """The first setting of a load model that is not the concurrency sweep, if any."""
        given = {**self.models(), "load": self.load}
        return next((name for name, value in given.items()
                     if name != "concurrency" and value is not None), None)

    def models(self) -> dict[str, object]:
        """The load models' own settings, by name, as given."""
        return {"concurrency": self.concurrency, "users": self.users, "rate": self.rate,
                "agents": self.agent.agents, "trace": self.workload.trace}


def load_fields(settings: LoadSettings) -> dict[str, Any]:
    """RunConfig fields for these settings: input/output tokens, `workload` and `load` (None:
    the closed sweep of `concurrency`). Bad input raises a `UserInputError`, before any load."""
    _check_one_load_model(settings)
    _check_none_ignored(settings)
    chosen = _any_load(settings)
    fields = config_fields(settings.workload)
    replay = fields.pop("load", None)
    agents = agents_load(settings.agent, settings.endpoint, settings.think_time,
                         settings.ramp_s, settings.duration, settings.seed)
    plans = (chosen, _open_load(settings), _sessions_load(settings), agents, replay)
    fields["load"] = next((plan for plan in plans if plan is not None), None)
    return fields


def _two_models(first: str, second: str) -> SettingError:
    return SettingError(f"{{{first}}} and {{{second}}} are two load models; give one of them",
                        first, second)


def _check_one_load_model(settings: LoadSettings) -> None:
    """Refuse settings of two load models at once (a trace sets its own schedule)."""
    given = [name for name, value in settings.models().items() if value is not None]
    if settings.load is not None and given:
        raise _two_models("load", given[0])
    if "trace" in given and len(given) > 1:
        other = next(name for name in given if name != "trace")
        raise SettingError(f"{{trace}} sets its own schedule: drop {{{other}}}", "trace", other)
    if len(given) > 1:
        raise _two_models(given[1], given[0])


def _check_none_ignored(settings: LoadSettings) -> None:
    """Refuse a setting the chosen load model would not use: it was silently ignored once
    (`requests` in a closed loop, `think_time` without `users`, ...)."""
    if settings.load is not None:
        return  # a kind's text form carries its own settings
    people = settings.users is not None or settings.agent.agents is not None
    ignored = [
        ("requests", settings.requests is not None and settings.rate is None, "rate"),
        ("max_concurrency", settings.max_concurrency is not None and settings.rate is None,
         "rate"),
        ("arrival", settings.arrival != "poisson" and settings.rate is None, "rate"),
        ("burstiness", settings.burstiness != 1.0 and settings.arrival != "gamma", "arrival"),
        ("think_time", settings.think_time != SESSIONS.think and not people, "users"),
        ("turns", settings.turns is not None and settings.users is None, "users"),
        ("warmup_s", settings.warmup_s is not None and settings.rate is None, "rate"),
        ("cooldown_s", settings.cooldown_s is not None and settings.rate is None, "rate"),
        ("ramp_s", bool(settings.ramp_s) and not people, "users"),
        ("duration", settings.duration is not None and not people
         and settings.rate is None, "users"),
        *[(name, given and settings.agent.agents is None, "agents")
          for name, given in settings.agent.shaping().items()],
    ]
    for setting, unused, needs in ignored:
        if unused:
            hint = " gamma" if setting == "burstiness" else ""
            raise SettingError(f"{{{setting}}} needs {{{needs}}}{hint}; without it, it does "
                               "nothing", setting, needs)


def _any_load(settings: LoadSettings) -> LoadPlan | None:
    """The plan a kind's text form names (None without one)."""
    if settings.load is None:
        return None
    try:
        return load_from_text(settings.load, settings.seed)
    except ValidationError as exc:
        raise setting_error(exc, {loc: "load" for loc in _locs(exc)}) from None


def _locs(exc: ValidationError) -> list[str]:
    return [".".join(map(str, problem["loc"])) for problem in exc.errors()]


def _open_load(settings: LoadSettings) -> OpenLoad | None:
    """The open loop the settings ask for, None without `rate`."""
    if settings.rate is None:
        return None
    if settings.duration is not None and settings.requests is not None:
        raise SettingError("give one of {duration} and {requests}, not both", "duration",
                           "requests")
    duration = settings.duration
    if duration is None and settings.requests is None:
        duration = OPEN_DURATION_S
    window: dict[str, Any] = {"warmup_s": settings.warmup_s, "cooldown_s": settings.cooldown_s}
    try:
        return OpenLoad(
            rates=parse_rates(settings.rate), arrival=settings.arrival,  # type: ignore[arg-type]
            burstiness=settings.burstiness, duration_s=duration, requests=settings.requests,
            max_concurrency=settings.max_concurrency, seed=settings.seed,
            **{k: v for k, v in window.items() if v is not None},
        )
    except ValidationError as exc:
        raise setting_error(exc, OPEN_SETTINGS) from exc


def _sessions_load(settings: LoadSettings) -> SessionsLoad | None:
    """The sessions the settings ask for, None without `users`."""
    if settings.users is None:
        return None
    if settings.endpoint != "chat":
        raise SettingError("{users} sends multi-turn chat messages: use {endpoint} chat",
                           "users", "endpoint")
    think = parse_think_time(settings.think_time, "think_time")
    turns = _turns(settings.turns, settings.workload.dataset is not None)
    duration = settings.duration if settings.duration is not None else SESSIONS.duration_s
    try:
        return SessionsLoad(
            users=parse_levels(settings.users, "users"), think=str(think), turns=str(turns),
            ramp_s=settings.ramp_s, duration_s=duration, seed=settings.seed,
        )
    except ValidationError as exc:
        raise setting_error(exc, SESSION_SETTINGS) from exc


def _turns(text: str | None, dataset: bool) -> str | TurnCount:
    """The turn spec: with a dataset `all` (each conversation's own turns) unless capped."""
    if text is None:
        return ALL_TURNS if dataset else SESSIONS.turns
    if not dataset:
        if text.strip().lower() == ALL_TURNS:
            raise SettingError("{turns} all takes each dataset conversation's own turns: it "
                               "needs {dataset}", "turns", "dataset")
        return parse_turns(text, "turns")
    cap = parse_turn_cap(text, "turns")
    return ALL_TURNS if cap is None else cap


__all__ = ["LoadSettings", "load_fields"]
