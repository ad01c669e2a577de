"""`plan_capacity`: SLO matrix, C_max and users for stored runs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from servecap.core.config import SLO
from servecap.stats.capacity import CapacityPlan, plan_levels
from servecap.storage.runs import Run, load_runs, status_text


class RunCapacity(BaseModel):
    """One run's capacity under an SLO (the stable `plan --format json` shape)."""

    name: str
    # complete, or incomplete with why and its partial levels; for the table, kept out of
    # the stable `plan --format json` shape
    status: str = Field(default="", exclude=True)
    c_max: int | None
    latency_mean_s: float | None
    users: int | None
    levels: list[dict[str, Any]]
    c_max_lower_bound: bool = False  # every tested level passed: test higher


class CapacityReport(BaseModel):
    slo: SLO
    runs: list[RunCapacity]


def plan_run(run: Run, slo: SLO, include_partial: bool = False) -> CapacityPlan:
    return plan_levels(run.levels, slo, include_partial)


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
                levels=[verdict.model_dump() for verdict in plan.levels],
                c_max_lower_bound=plan.c_max_lower_bound,
            )
        )
    return CapacityReport(slo=slo, runs=items)


def plan_capacity(paths: Sequence[Path | str], slo: SLO) -> CapacityReport:
    """Load the runs under `paths` and plan each."""
    return plan_runs(load_runs(paths), slo)
