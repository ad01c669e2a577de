"""`plan_capacity`: SLO matrix, C_max and users for stored runs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from servecap.core.config import SLO
from servecap.stats.capacity import CapacityPlan, plan_levels
from servecap.storage.runs import Run, load_runs, status_text
from servecap.storage.verification import load_verification


class RunCapacity(BaseModel):
    """One run's capacity under an SLO (the stable `plan --format json` shape).

    Fields after `levels` were added with the uncertainty work: C_max's neighbours, the SLO
    that binds at the level above, and the interval verdicts (pass / fail / undecided) at
    both. Each level adds its verdicts, `ttft_ci`/`tps_ci`, `n_ok`, `warnings` and the
    stored bootstrap `intervals` (None for runs recorded before them).
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
    # A `servecap verify` run (`verification.json`): the users the sweep predicted (Little's
    # law) and the users this run verified (None: no N passed), labelled as such.
    predicted_users: int | None = None
    verified_users: int | None = None
    verification: dict[str, Any] | None = None


class CapacityReport(BaseModel):
    slo: SLO
    runs: list[RunCapacity]


def plan_run(run: Run, slo: SLO, include_partial: bool = False) -> CapacityPlan:
    return plan_levels(run.levels, slo, include_partial)


def _levels(run: Run, plan: CapacityPlan) -> list[dict[str, Any]]:
    """Each level's verdict, with the level's stored bootstrap intervals beside it."""
    intervals = {
        level.key: level.model_dump(mode="json", include={"intervals"})["intervals"]
        for level in run.levels
    }
    return [
        {**verdict.model_dump(mode="json"), "intervals": intervals.get(verdict.level)}
        for verdict in plan.levels
    ]


def _verified(run: Run) -> dict[str, Any]:
    result = load_verification(run.path)
    if result is None:
        return {}
    return {
        "predicted_users": result.predicted_users,
        "verified_users": result.verified_users,
        "verification": result.model_dump(mode="json"),
    }


def plan_runs(
    runs: Sequence[Run], slo: SLO, include_partial: bool = False
) -> CapacityReport:
    """Capacity of each run; levels in the documented JSON shape. Partial levels count for
    C_max only with `include_partial`."""
    items = []
    for run in runs:
        plan = plan_run(run, slo, include_partial)
        items.append(
            RunCapacity(
                name=run.name,
                status=status_text(run),
                c_max=plan.c_max,
                latency_mean_s=plan.latency_mean_s,
                users=plan.users,
                c_max_lower_bound=plan.c_max_lower_bound,
                levels=_levels(run, plan),
                below=plan.below,
                above=plan.above,
                binding=plan.binding,
                verdict_at_c_max=plan.verdict_at_c_max,
                verdict_above=plan.verdict_above,
                **_verified(run),
            )
        )
    return CapacityReport(slo=slo, runs=items)


def plan_capacity(paths: Sequence[Path | str], slo: SLO) -> CapacityReport:
    """Load the runs under `paths` and plan each."""
    return plan_runs(load_runs(paths), slo)
