"""The report's cost table: per config, the cost at C_max, the verified users and peak
throughput (`stats.cost`, the formulas in its text and docs/how-to/cost.md), and at the
verified agents of a `capacity --load agents` answer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from servecap.core.cost import CostBasis
from servecap.core.numbers import fmt_number
from servecap.core.summary import LevelSummary
from servecap.kinds.agents import KIND as AGENTS_KIND
from servecap.kinds.registry import kind_of
from servecap.report.model import ReportModel, RunMeta
from servecap.report.verified import verified_users
from servecap.report.views import Table
from servecap.stats.cost import CostPoint, RunCost, cost_point, run_cost
from servecap.storage.capacity_answer import answer_for

COST_HEADER = ["config", "at", "level", "users", "output tok/s",
               "cost / M output tokens", "users / GPU", "cost / user / hour"]


def money(value: float | None, currency: str) -> str:
    """`1.234 USD`; 4 significant digits keep cents and fractions of a cent readable."""
    return "n/a" if value is None else f"{value:.4g} {currency}"


def cost_row(config: str, point: CostPoint, currency: str) -> list[str]:
    return [
        config, point.at, point.level or "-",
        "n/a" if point.users is None else str(point.users),
        fmt_number(point.output_tok_s, 0) if point.output_tok_s is not None else "n/a",
        money(point.cost_per_m_output_tokens, currency),
        fmt_number(point.users_per_gpu, 2) if point.users_per_gpu is not None else "n/a",
        money(point.cost_per_user_hour, currency),
    ]


def cost_rows(config: str, cost: RunCost) -> list[list[str]]:
    return [cost_row(config, p, cost.currency) for p in cost.points]


def basis_text(cost: RunCost) -> str:
    return (f"{cost.gpus:g} GPU x {cost.gpu_hour_cost:g} {cost.currency}/GPU-hour"
            f" = {cost.hourly:g} {cost.currency}/hour")


def level_users(think_s: float) -> Callable[[LevelSummary], int | None]:
    """The users a level stands for: its kind's law at its mean latency."""
    def users_at(level: LevelSummary) -> int | None:
        if level.latency_mean_s is None:
            return None
        return kind_of(level.key).users_at(level.key, level.latency_mean_s, think_s)
    return users_at


def run_costs(model: ReportModel, stat: str) -> dict[str, RunCost]:
    """Each config's cost on `stat` (configs without GPUs and a price are left out)."""
    verified = verified_users(model.runs, model.options.slo)
    out: dict[str, RunCost] = {}
    for run in model.runs:
        basis = model.options.cost.over(run.cost)
        row = model.analysis.slo.capacity_of(stat, run.name)
        if basis is None or row is None:
            continue
        cost = run_cost(basis, run.levels, row.top, row.users,
                        verified(run.name, stat) or None,
                        level_users(model.options.slo.think_time_s),
                        _verified_tok_s(run, verified(run.name, stat)))
        out[run.name] = with_agents(cost, basis, verified_agents(run.path), run.levels)
    return out


def verified_agents(run_path: str | Path) -> int | None:
    """The verified agents of the `capacity --load agents` answer a run belongs to."""
    answer = answer_for(Path(run_path))
    return answer.agents.agents_max if answer is not None and answer.agents else None


def with_agents(
    cost: RunCost, basis: CostBasis, agents: int | None, levels: Sequence[LevelSummary],
) -> RunCost:
    """The cost with a point at an agents answer's verified agents, each agent a served
    user (cost per agent-hour: the hourly cost over the agents), the throughput that of
    their own level; unchanged without verified agents."""
    if not agents:
        return cost
    key = AGENTS_KIND.key(agents)
    level = next((lv for lv in levels if lv.key == key), None)
    point = cost_point(basis, "verified agents", key,
                       level.output_tok_s if level is not None else None, agents)
    return cost.model_copy(update={"points": [*cost.points, point]})


def _verified_tok_s(run: RunMeta, users: int | None) -> float | None:
    """A reported verify run's own users level gives its throughput (else unknown)."""
    level = next((lv for lv in run.levels if users and lv.users == users), None)
    return None if level is None else level.output_tok_s


def cost_table(model: ReportModel, stat: str) -> Table | None:
    """Cost at the SLO boundary beside peak throughput; None when no config has a cost."""
    costs = run_costs(model, stat)
    if not costs:
        return None
    label = "P90" if stat == "p90" else "mean"
    bases = "; ".join(f"{name}: {basis_text(c)}" for name, c in costs.items())
    return Table(
        title=f"Cost at the SLO boundary ({label}; {bases})",
        header=COST_HEADER,
        rows=[row for name, c in costs.items() for row in cost_rows(name, c)],
    )


def cost_tables(model: ReportModel) -> list[Table]:
    return [t for stat in ("p90", "mean") if (t := cost_table(model, stat)) is not None]
