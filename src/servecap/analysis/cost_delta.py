"""Which deployment is cheaper per served user: a comparison's cost per user-hour, B - A.

Each target's cost per served user-hour is H / U (`stats.cost`), U its users at C_max under
the SLOs with their interval from `analysis.capacity_delta` (the low end at C_max's low end
with L_mean's upper bound, the high end the other way round), so H / U runs from H / U_high
to H / U_low. The difference B - A is by interval arithmetic, conservative as the users'
difference is; a difference whose interval spans 0 is "no significant difference".
"""

from __future__ import annotations

from dataclasses import dataclass

from servecap.analysis.capacity_delta import Capacity
from servecap.core.cost import CostBasis
from servecap.stats.cost import cheaper, cost_difference, per_user_hour
from servecap.stats.difference import Bounds


@dataclass(frozen=True, slots=True)
class CostDelta:
    """Both targets' cost per served user-hour with intervals, and B - A."""

    a: str
    b: str
    currency: str
    a_cost: Bounds
    b_cost: Bounds
    difference: Bounds
    cheaper: str  # "a", "b" or "undecided"

    def sentence(self, confidence: float) -> str:
        conf = f"{round(100 * confidence)}% CI"
        each = "; ".join(
            f"{name} {_money(c.estimate, self.currency)} ({conf} {_span(c, self.currency)})"
            for name, c in ((self.b, self.b_cost), (self.a, self.a_cost)))
        d = self.difference
        if self.cheaper == "undecided":
            return (f"cost per served user-hour at the SLOs: {each}; no significant difference "
                    f"({self.b} minus {self.a} {d.estimate:+.4g} {self.currency}, "
                    f"{conf} {d.low:+.4g}..{d.high:+.4g}).")
        who, other = (self.b, self.a) if self.cheaper == "b" else (self.a, self.b)
        sign = -1 if self.cheaper == "b" else 1
        low, high = sorted((sign * d.low, sign * d.high))
        return (f"cost per served user-hour at the SLOs: {each}; {who} is cheaper than "
                f"{other} by {sign * d.estimate:.4g} {self.currency} per user-hour "
                f"({conf} {low:.4g}..{high:.4g}).")


def _money(value: float, currency: str) -> str:
    return f"{value:.4g} {currency}"


def _span(b: Bounds, currency: str) -> str:
    return f"{b.low:.4g}..{b.high:.4g} {currency}"


def _users(cap: Capacity) -> Bounds | None:
    if cap.users is None or cap.users_high is None:
        return None
    return Bounds(cap.users, cap.users_low or 0, cap.users_high)


def cost_delta(
    a: Capacity, b: Capacity, basis_a: CostBasis | None, basis_b: CostBasis | None
) -> CostDelta | None:
    """B against A per served user-hour; None without both bases (in one currency) or
    where a target serves no user within the SLOs."""
    if basis_a is None or basis_b is None or basis_a.currency != basis_b.currency:
        return None
    users_a, users_b = _users(a), _users(b)
    if users_a is None or users_b is None:
        return None
    cost_a, cost_b = per_user_hour(basis_a, users_a), per_user_hour(basis_b, users_b)
    if cost_a is None or cost_b is None:
        return None
    diff = cost_difference(cost_a, cost_b)
    return CostDelta(a.name, b.name, basis_a.currency, cost_a, cost_b, diff, cheaper(diff))
