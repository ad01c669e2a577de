"""Cost at the SLO boundary: what a served user and a million output tokens cost.

Pure functions over level summaries and a `CostBasis` (GPUs x price per GPU-hour = H, the
deployment's cost per hour). At a point with output throughput T (tok/s, the level's
`output_tok_s`: sum of output tokens / the level's wall time) and U users:

- cost per million output tokens = H / (T x 3600) x 1e6
- users per GPU = U / gpus
- cost per user per hour = H / U

The points: C_max (the highest level within the SLOs, U its users by Little's law), the
verified users (U measured; T only where the verify level's throughput is known), and peak
throughput (the level of the highest T, U the users that level stands for by the same law,
whether or not it meets the SLOs): peak is where tokens are cheapest, C_max what the SLO
costs. A comparison's cost per served user carries the users' interval: H / U over
[U_low, U_high] is [H / U_high, H / U_low], and B - A by interval arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel

from servecap.core.cost import CostBasis
from servecap.core.level_key import LevelKey
from servecap.core.summary import LevelSummary
from servecap.stats.difference import Bounds, interval_difference

SECONDS_PER_HOUR = 3600.0
TOKENS_PER_MILLION = 1e6


class CostPoint(BaseModel):
    """The cost figures at one point of a run (None where the point lacks the input)."""

    at: str  # "C_max", "verified users" or "peak throughput"
    level: str | None = None
    users: int | None = None
    output_tok_s: float | None = None
    cost_per_m_output_tokens: float | None = None
    users_per_gpu: float | None = None
    cost_per_user_hour: float | None = None


class RunCost(BaseModel):
    """A run's cost at the boundary and at peak, with the basis it was computed on."""

    gpus: float
    gpu_hour_cost: float
    currency: str
    hourly: float
    points: list[CostPoint]

    def point(self, at: str) -> CostPoint | None:
        return next((p for p in self.points if p.at == at), None)


def cost_point(
    basis: CostBasis, at: str, level: LevelKey | None, output_tok_s: float | None,
    users: int | None,
) -> CostPoint:
    """The three figures at one point, from its throughput and users (see the module)."""
    per_m = None
    if output_tok_s is not None and output_tok_s > 0:
        per_m = basis.hourly / (output_tok_s * SECONDS_PER_HOUR) * TOKENS_PER_MILLION
    served = users is not None and users > 0
    return CostPoint(
        at=at, level=None if level is None else str(level), users=users,
        output_tok_s=output_tok_s, cost_per_m_output_tokens=per_m,
        users_per_gpu=users / basis.gpus if served and users is not None else None,
        cost_per_user_hour=basis.hourly / users if served and users is not None else None,
    )


def peak_level(levels: Sequence[LevelSummary]) -> LevelSummary | None:
    """The level of the highest output throughput (the first of equals)."""
    known = [lv for lv in levels if lv.output_tok_s is not None and not lv.partial]
    return max(known, key=lambda lv: lv.output_tok_s or 0.0, default=None)


def run_cost(
    basis: CostBasis, levels: Sequence[LevelSummary], top: LevelKey | None,
    users: int | None, verified: int | None, users_at: Callable[[LevelSummary], int | None],
    verified_tok_s: float | None = None,
) -> RunCost:
    """Cost at C_max (`top`, its `users`), at the `verified` users and at peak throughput.
    `users_at` gives the users a level stands for (the kind's law at its mean latency)."""
    by_key = {lv.key: lv for lv in levels}
    at_top = by_key.get(top) if top is not None else None
    peak = peak_level(levels)
    points = [cost_point(basis, "C_max", top, at_top.output_tok_s if at_top else None, users)]
    if verified is not None:
        points.append(cost_point(basis, "verified users", None, verified_tok_s, verified))
    if peak is not None:
        points.append(cost_point(basis, "peak throughput", peak.key, peak.output_tok_s,
                                 users_at(peak)))
    return RunCost(gpus=basis.gpus, gpu_hour_cost=basis.gpu_hour_cost,
                   currency=basis.currency, hourly=basis.hourly, points=points)


def per_user_hour(basis: CostBasis, users: Bounds) -> Bounds | None:
    """Cost per user per hour with its interval from the users' (None: no users served;
    an unbounded high end where the users' low end is 0 is reported as infinity)."""
    if users.estimate <= 0 or users.high <= 0:
        return None
    high = basis.hourly / users.low if users.low > 0 else float("inf")
    return Bounds(basis.hourly / users.estimate, basis.hourly / users.high, high)


def cost_difference(a: Bounds, b: Bounds) -> Bounds:
    """B - A with its interval by interval arithmetic ([B.low - A.high, B.high - A.low])."""
    return interval_difference(a, b)


def cheaper(difference: Bounds) -> str:
    """`a` or `b` where the difference's interval excludes 0, else `undecided`."""
    if difference.high < 0:
        return "b"
    if difference.low > 0:
        return "a"
    return "undecided"
