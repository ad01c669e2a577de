"""A stored run's cost at the SLO boundary: the basis (flags over `run.json`'s `cost`) and
the throughput of the verified users, handed to `stats.cost`; and, for the probe run of a
`capacity --load agents` answer, the cost at its verified agents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servecap.core.config import SLO
from servecap.core.cost import CostBasis, CostFields
from servecap.core.errors import ServecapError
from servecap.report.cost_views import level_users, verified_agents, with_agents
from servecap.stats.capacity import CapacityPlan
from servecap.stats.cost import RunCost, run_cost
from servecap.storage.runs import Run, load_run


def cost_basis(run: Run, flags: CostFields) -> CostBasis | None:
    """The flags over the run's stored cost; None unless GPUs and price are both known."""
    return flags.over(run.info.cost)


def verified_tok_s(run: Run, verification: dict[str, Any] | None) -> float | None:
    """The output throughput of the verified users' level, read from the verify run (this
    run, or the one `verification.verify_run` names); None where it cannot be read."""
    if not verification or verification.get("verified_users") is None:
        return None
    where = Path(str(verification.get("verify_run", run.path)))
    try:
        source = run if where == run.path else load_run(where)
    except (OSError, ServecapError):
        return None
    n = verification["verified_users"]
    level = next((lv for lv in source.levels if lv.users == n), None)
    return None if level is None else level.output_tok_s


def boundary_cost(
    run: Run, plan: CapacityPlan, slo: SLO, verified: dict[str, Any], flags: CostFields
) -> RunCost | None:
    """Cost at C_max, at the verified users, at peak throughput and at an agents answer's
    verified agents (None without a basis)."""
    basis = cost_basis(run, flags)
    if basis is None:
        return None
    users = verified.get("verified_users")
    cost = run_cost(basis, run.levels, plan.top, plan.users, users, level_users(slo.think_time_s),
                    verified_tok_s(run, verified.get("verification")))
    return with_agents(cost, basis, verified_agents(run.path), run.levels)
