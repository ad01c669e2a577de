"""SLO compliance per level, C_max, and the users a deployment serves by Little's law.

Pure functions over level summaries. Definitions are DESIGN.md's:
C_max is the highest level at which that level and every lower one meet both SLOs on the
chosen statistic; users N = C_max * (1 + T_think / L_mean), L_mean the MEAN latency at C_max.
For an open loop the top level is the highest compliant offered rate X (TTFT judged from
each request's target time), and users N = X * (L_mean + T_think), the response-time law.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pydantic import (
    BaseModel,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from servecap.core.config import SLO
from servecap.core.level_key import LevelKey, key_fields
from servecap.core.summary import LevelSummary
from servecap.stats.level_verdicts import level_verdicts, sample_warnings, stored_interval
from servecap.stats.response_time import users_for_concurrency
from servecap.stats.verdict import LevelVerdicts, cmax_bracket


class LevelVerdict(BaseModel):
    """One level judged against the SLOs (values are on the chosen statistic).

    Dumped with its key as the level's stored fields: `{"concurrency": 32, ...}` for the
    closed kind (the stable `plan --format json` shape), `{"level": "rate=4/s", ...}` else.
    """

    level: LevelKey
    ttft: float | None
    tps: float | None
    ttft_ok: bool
    tps_ok: bool
    # the level stopped short: not counted for C_max by default (kept out of the stable
    # `plan --format json` shape; the run's status names its partial levels)
    partial: bool = Field(default=False, exclude=True)
    # the level's warning about the statistic itself, e.g. "P90 from only 3 samples (want >= 10)"
    sample_warning: str | None = None
    # Uncertainty (added fields; `ttft_ok`/`tps_ok` stay the point verdicts C_max uses):
    # pass / fail / undecided from the bootstrap interval, the interval [low, high] on the
    # chosen statistic (None when the run stored none), and too-few-samples warnings.
    verdict: str | None = None
    ttft_verdict: str | None = None
    tps_verdict: str | None = None
    ttft_ci: list[float] | None = None
    tps_ci: list[float] | None = None
    latency_ci: list[float] | None = None
    n_ok: int | None = None
    warnings: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.ttft_ok and self.tps_ok

    @model_validator(mode="before")
    @classmethod
    def _key_from_fields(cls, data: Any) -> Any:
        """Reads back its own dump: `concurrency` (closed) or `level` names the key."""
        if isinstance(data, dict) and "level" not in data and "concurrency" in data:
            rest = {k: v for k, v in data.items() if k != "concurrency"}
            return {**rest, "level": LevelKey.coerce(data["concurrency"])}
        return data

    @model_serializer(mode="wrap")
    def _key_as_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        data.pop("level", None)
        return {**key_fields(self.level), **data}


class CapacityPlan(BaseModel):
    """The capacity of one run under one SLO.

    `top` is the highest level at which it and every lower one meet both SLOs; `c_max` is
    its concurrency when the level is a closed loop's (C_max, as DESIGN defines it), and
    `rate_max` its offered rate when it is an open loop's (requests/s).
    """

    top: LevelKey | None = Field(default=None, exclude=True)
    c_max: int | None
    latency_mean_s: float | None
    users: int | None
    levels: list[LevelVerdict]
    # every tested level passed: the true C_max (and users) may be higher than measured
    c_max_lower_bound: bool = False
    # C_max's bracket: the measured level under it, the first level that misses, the SLOs
    # it misses there (`errors` for failed requests), and the interval verdicts at both.
    below: int | float | None = None
    above: int | float | None = None
    binding: list[str] = Field(default_factory=list)
    verdict_at_c_max: str | None = None
    verdict_above: str | None = None
    rate_max: float | None = Field(default=None, exclude=True)

    def boundary(self) -> dict[str, Any]:
        """C_max, its users and its bracket: the fields every capacity row repeats."""
        return {name: getattr(self, name) for name in BOUNDARY_FIELDS}


BOUNDARY_FIELDS = ("c_max", "latency_mean_s", "users", "c_max_lower_bound", "below", "above",
                   "binding", "verdict_at_c_max", "verdict_above")


class TopLevelMeaning(Protocol):
    """What a plan asks of the kind of its top level (`servecap.kinds`' `LoadKind` meets
    it; the kinds sit above this layer, so the caller hands their lookup in)."""

    def users_at(
        self, key: LevelKey, latency_mean_s: float, think_time_s: float
    ) -> int | None: ...

    def capacity_fields(self, key: LevelKey) -> dict[str, Any]: ...


MeaningOf = Callable[[LevelKey], TopLevelMeaning]


def ttft_metric(level: LevelSummary, statistic: str) -> str:
    """The TTFT a level is judged on: from the target time (`ttft_sched`, what the user
    waited, cap waits and client lateness included) where the level has one, else from
    the send."""
    return "ttft_sched" if level.value("ttft_sched", statistic) is not None else "ttft"


def judge_level(level: LevelSummary, slo: SLO) -> LevelVerdict:
    """Does this level meet the TTFT and TPS objectives on `slo.statistic`?

    A level with failed requests misses the SLO unless every request succeeded: a failure is
    an SLO miss (goodput), so its TTFT/TPS pass only if the error rate is zero.
    """
    ttft = level.value(ttft_metric(level, slo.statistic), slo.statistic)
    tps = level.value("tps", slo.statistic)
    clean = not level.error_rate
    ttft_ok = ttft is not None and ttft <= slo.ttft_ms and clean
    tps_ok = tps is not None and tps >= slo.tps and clean
    prefix = f"{slo.statistic.upper()} from only"
    warning = next((w for w in level.warnings if w.startswith(prefix)), None)
    judged = _judged(level, slo)
    ttft_v, tps_v = judged.metrics
    return LevelVerdict(
        level=level.key, ttft=ttft, tps=tps, ttft_ok=ttft_ok, tps_ok=tps_ok,
        verdict=judged.verdict.value, ttft_verdict=ttft_v.verdict.value,
        tps_verdict=tps_v.verdict.value,
        ttft_ci=stored_interval(level, "ttft", slo.statistic),
        tps_ci=stored_interval(level, "tps", slo.statistic),
        latency_ci=stored_interval(level, "latency", slo.statistic),
        n_ok=level.n_ok, warnings=sample_warnings(level, slo.statistic),
        partial=bool(level.partial), sample_warning=warning,
    )


def _judged(level: LevelSummary, slo: SLO) -> LevelVerdicts:
    return level_verdicts(level, slo.statistic, slo.ttft_ms, slo.tps)


def users_by_littles_law(c_max: int, latency_mean_s: float, think_time_s: float) -> int:
    """Users served: each user holds a stream for L and thinks for T between requests."""
    return round(users_for_concurrency(c_max, latency_mean_s, think_time_s))


def plan_levels(
    levels: Sequence[LevelSummary], slo: SLO, meaning_of: MeaningOf,
    include_partial: bool = False,
) -> CapacityPlan:  # fmt: skip
    """The top level within SLO (C_max for a closed loop), L_mean there and users.

    `meaning_of(key)` is the top level's kind (`kinds.registry.kind_of`): it names the
    plan's fields for its level (`c_max`, `rate_max`) and the users it stands for. A partial
    level (a run stopped inside it) is judged and shown but, unless `include_partial`,
    neither sets nor breaks C_max: a few requests are not a level.
    """
    ordered = sorted(levels, key=lambda lv: lv.key)
    verdicts = [judge_level(level, slo) for level in ordered]
    counted = [lv for lv in ordered if include_partial or not lv.partial]
    bracket = _bracket(counted, slo)
    best: LevelSummary | None = None
    for level, verdict in zip(ordered, verdicts, strict=True):
        if level.partial and not include_partial:
            continue
        if not verdict.ok:
            break
        best = level
    if best is None or best.latency_mean_s is None:
        return CapacityPlan(
            c_max=None, latency_mean_s=None, users=None, levels=verdicts, **bracket
        )
    top = best.key
    meaning = meaning_of(top)
    return CapacityPlan(
        top=top,
        **{"c_max": None, **meaning.capacity_fields(top)},
        latency_mean_s=best.latency_mean_s,
        users=meaning.users_at(top, best.latency_mean_s, slo.think_time_s),
        levels=verdicts,
        # every counted level passed: the true C_max may lie above the highest tested
        c_max_lower_bound=best is [lv for lv in ordered if include_partial or not lv.partial][-1],
        **bracket,
    )


def _bracket(ordered: Sequence[LevelSummary], slo: SLO) -> dict[str, Any]:
    """C_max's neighbours and the binding SLO (`stats.verdict.cmax_bracket`), one kind only."""
    kinds = {(level.key.prefix, level.key.unit) for level in ordered}
    if len(kinds) != 1:
        return {}
    found = cmax_bracket([(lv.key.value, _judged(lv, slo)) for lv in ordered])
    return {
        "below": found.below,
        "above": found.above,
        "binding": list(found.binding),
        "verdict_at_c_max": found.verdict_at_c_max.value if found.verdict_at_c_max else None,
        "verdict_above": found.verdict_above.value if found.verdict_above else None,
    }
