"""`plan_capacity`: SLO matrix, C_max and users for stored runs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from servecap.analysis.prefix_cache import prefix_table
from servecap.api.stored.cost import boundary_cost
from servecap.core.config import SLO
from servecap.core.cost import CostFields
from servecap.core.level_key import LevelKey
from servecap.kinds.agents_verdict import AgentsPlan
from servecap.kinds.base import KindTable
from servecap.kinds.registry import kind_of
from servecap.metrics.energy import energy_at
from servecap.stats.capacity import CapacityPlan, plan_levels
from servecap.stats.cost import RunCost
from servecap.storage.agents_verification import agents_plan_of
from servecap.storage.runs import Run, load_runs, run_goodput, status_text
from servecap.storage.verification import load_verification, verification_for

# Keys only a run of a kind with rates has; a closed run's JSON keeps its documented keys.
RATE_KEYS = ("rate_max", "top_level", "kind_tables", "prefix_table", "cost", "energy",
             "agents")


class RunCapacity(BaseModel):
    """One run's capacity under an SLO (the stable `plan --format json` shape).

    Fields after `levels` were added with the uncertainty work: C_max's neighbours, the SLO
    that binds at the level above, and the interval verdicts (pass / fail / undecided) at
    both. Each level adds its verdicts, `ttft_ci`/`tps_ci`, `n_ok`, `warnings` and the
    stored bootstrap `intervals` (None for runs recorded before them).

    An open-loop run adds `rate_max` (the highest compliant offered rate, requests/s) and
    `top_level` (its key, `rate=4/s`), and each of its levels `goodput_rps` and
    `slo_attainment`; a closed run's JSON is what it always was.
    """

    name: str
    # complete, or incomplete with why and its partial levels; for the table, kept out of
    # the stable `plan --format json` shape
    status: str = Field(default="", exclude=True)
    c_max: int | None
    latency_mean_s: float | None
    users: int | None
    levels: list[dict[str, Any]]
    c_max_lower_bound: bool = False  # every tested level passed: test higher
    below: int | float | None = None
    above: int | float | None = None
    binding: list[str] = Field(default_factory=list)
    verdict_at_c_max: str | None = None
    verdict_above: str | None = None
    # Predicted (Little's law on C_max) beside verified users (measured N users): on a verify
    # run (`verification.json`) its own outcome; on a sweep, the newest verify run made from
    # it under the same SLO (`verification.verify_run` names it), else verified is None.
    predicted_users: int | None = None
    verified_users: int | None = None
    verification: dict[str, Any] | None = None
    rate_max: float | None = None
    top_level: str | None = None
    # tables a level's kind adds of its own (`LoadKind.tables`), e.g. a rate shape's time
    # windows; absent from the JSON of runs whose kinds add none
    kind_tables: list[KindTable] | None = None
    # the prefix cache per level (`analysis.prefix_cache`): absent from the JSON of runs
    # that recorded no prefix-cache figures
    prefix_table: KindTable | None = None
    # cost at C_max, the verified users and peak throughput (`stats.cost`); absent from the
    # JSON unless GPUs and their price are known (flags, or stored with the run)
    cost: RunCost | None = None
    # `--power-metrics` runs: the energy block at C_max and at peak throughput, each with
    # its level (`metrics.energy`); every level's own is in `levels`
    energy: dict[str, dict[str, Any]] | None = None
    # a run with agents levels: the agents it holds within the task-time SLO, verified by
    # its levels, and predicted from its closed levels (`kinds.agents_verdict`)
    agents: AgentsPlan | None = None

    @model_serializer(mode="wrap")
    def _rate_keys_when_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in RATE_KEYS:
            if data.get(name) is None:
                data.pop(name, None)
        return data


class CapacityReport(BaseModel):
    slo: SLO
    runs: list[RunCapacity]


def plan_run(run: Run, slo: SLO, include_partial: bool = False) -> CapacityPlan:
    """The per-call plan of the run's levels that their kind judges per call
    (`LoadKind.judged_per_call`): agents levels are judged on their tasks instead
    (`RunCapacity.agents`), so a capacity run's probes and agents keep apart."""
    levels = [lv for lv in run.levels if kind_of(lv.key).judged_per_call()]
    return plan_levels(levels, slo, kind_of, include_partial)


def _levels(run: Run, plan: CapacityPlan, slo: SLO) -> list[dict[str, Any]]:
    """Each level's verdict, with the level's stored bootstrap intervals beside it (and an
    open-loop level's goodput)."""
    goodput = goodput_fields(run, slo)
    intervals = {
        level.key: level.model_dump(mode="json", include={"intervals"})["intervals"]
        for level in run.levels
    }
    energy = {level.key: {"energy": level.energy} for level in run.levels if level.energy}
    return [
        {**verdict.model_dump(mode="json"), "intervals": intervals.get(verdict.level),
         **goodput.get(verdict.level, {}), **energy.get(verdict.level, {})}
        for verdict in plan.levels
    ]


def _verified(
    run: Run, slo: SLO, users: int | None, elsewhere: Sequence[Path]
) -> dict[str, Any]:
    """Predicted beside verified users: a verify run's own outcome, or for a sweep the
    newest verify run made from it under the same SLO (beside it or among `elsewhere`);
    a sweep nobody verified says its users are predicted only."""
    result = load_verification(run.path)
    if result is not None:
        return {
            "predicted_users": result.predicted_users,
            "verified_users": result.verified_users,
            "verification": {**result.model_dump(mode="json"), "verify_run": str(run.path)},
        }
    found = verification_for(run.path, slo, elsewhere)
    if found is None:
        return {"predicted_users": users}
    directory, result = found
    return {
        "predicted_users": users,
        "verified_users": result.verified_users,
        "verification": {**result.model_dump(mode="json"), "verify_run": str(directory)},
    }


def goodput_fields(run: Run, slo: SLO) -> dict[LevelKey, dict[str, float | None]]:
    """Goodput and SLO attainment per open-loop level, over the level's window: the offered
    rate times the fraction of the window's requests that met every per-request SLO."""
    return {
        key: {"goodput_rps": result.goodput_rps, "slo_attainment": result.attainment}
        for key, result in run_goodput(run, slo).items()
    }


def run_capacity(
    run: Run, slo: SLO, include_partial: bool = False, elsewhere: Sequence[Path] = (),
    cost: CostFields | None = None,
) -> RunCapacity:
    """One run's plan in the documented JSON shape (`elsewhere`: other run directories
    where a verify run of this one may be; `cost`: flags over the run's stored cost)."""
    plan = plan_run(run, slo, include_partial)
    verified = _verified(run, slo, plan.users, elsewhere)
    return RunCapacity(
        name=run.name,
        status=status_text(run),
        levels=_levels(run, plan, slo),
        **plan.boundary(),
        rate_max=plan.rate_max,
        top_level=str(plan.top) if plan.top is not None and plan.rate_max is not None else None,
        kind_tables=[t for lv in run.levels for t in kind_of(lv.key).tables(lv, slo)] or None,
        prefix_table=prefix_table(run.name, run.levels),
        cost=boundary_cost(run, plan, slo, verified, cost or CostFields()),
        energy=energy_at(run.levels, plan.top),
        agents=agents_plan_of(run, slo),
        **verified,
    )


def plan_runs(
    runs: Sequence[Run], slo: SLO, include_partial: bool = False,
    cost: CostFields | None = None,
) -> CapacityReport:
    """Capacity of each run; levels in the documented JSON shape. Partial levels count for
    C_max only with `include_partial`; `cost` (flags) over each run's stored cost."""
    paths = [r.path for r in runs]
    return CapacityReport(
        slo=slo,
        runs=[run_capacity(run, slo, include_partial, paths, cost) for run in runs],
    )


def plan_capacity(paths: Sequence[Path | str], slo: SLO) -> CapacityReport:
    """Load the runs under `paths` and plan each."""
    return plan_runs(load_runs(paths), slo)
