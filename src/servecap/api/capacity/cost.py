"""`servecap capacity --gpus N --gpu-hour-cost P`: the answer's cost at C_max, at the
verified users and at peak throughput, from its probe and users runs (`stats.cost`); an
agents answer (`--load agents`) adds the cost at its verified agents, from their level.

A simulator that runs S times faster than real time (`time_scale`) serves S times the
tokens per second it would in real time, so its throughput is divided by S; users are the
same on either clock (Little's law scales L and Z alike)."""

from __future__ import annotations

from pathlib import Path

from servecap.core.cost import CostFields
from servecap.core.errors import ServecapError
from servecap.core.level_key import LevelKey
from servecap.core.summary import LevelSummary
from servecap.kinds.open_loop import KIND as OPEN_KIND
from servecap.report.cost_views import level_users, with_agents
from servecap.stats.cost import run_cost
from servecap.storage.capacity_answer import CapacityAnswer
from servecap.storage.runs import load_run


def _levels(path: str | None) -> list[LevelSummary]:
    if not path:
        return []
    try:
        return list(load_run(Path(path)).levels)
    except (OSError, ServecapError):
        return []


def _real_time(level: LevelSummary, scale: float) -> LevelSummary:
    if level.output_tok_s is None or scale == 1:
        return level
    return level.model_copy(update={"output_tok_s": level.output_tok_s / scale})


def _top(answer: CapacityAnswer) -> LevelKey | None:
    """The probe level at the boundary: C_max, or the highest passing rate as it was
    offered (on the server's clock, as the probe run keys it)."""
    if answer.rate is not None:
        if answer.rate.rate_max is None:
            return None
        return OPEN_KIND.key(answer.rate.rate_max * (answer.time_scale or 1.0))
    return LevelKey.coerce(answer.c_max) if answer.c_max is not None else None


def price_answer(answer: CapacityAnswer, fields: CostFields | None) -> CapacityAnswer:
    """The answer with its cost (as it was without GPUs and a price)."""
    basis = (fields or CostFields()).over({})
    if basis is None:
        return answer
    scale = answer.time_scale or 1.0
    probes = [_real_time(lv, scale) for lv in _levels(answer.probe_run)]
    users_level = next((lv for lv in _levels(answer.users_run)
                        if answer.verified_users and lv.users == answer.verified_users), None)
    verified_tok_s = None
    if users_level is not None and users_level.output_tok_s is not None:
        verified_tok_s = users_level.output_tok_s / scale
    top = _top(answer)
    cost = run_cost(basis, probes, top, answer.predicted_users, answer.verified_users or None,
                    level_users(answer.slo.think_time_s / scale), verified_tok_s)
    agents = answer.agents.agents_max if answer.agents is not None else None
    return answer.model_copy(update={"cost": with_agents(cost, basis, agents, probes)})

