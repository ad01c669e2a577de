"""How stable a predicted C_max is: the C_max of each seeded draw of a simulated sweep.

A simulated sweep is one random draw, as a measured one is: its P90 rests on the same
10 x c requests a level of 10 rounds has. Where a level's P90 lies near the SLO, C_max moves
a whole level from one draw to the next (the seed's sglang-spec at c=4: a P90 of 1,111 ms
against a 1 s SLO; its profile gives C_max 2, 4 or 8 across ten draws). One C_max would hide
that; the C_max of each of several seeded draws, counted, shows it, and the levels whose
verdict differs between draws (`chance_levels`) say where more rounds would settle it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from servecap.stats.capacity import CapacityPlan


def c_max_counts(draws: Sequence[int | None]) -> list[tuple[int | None, int]]:
    """(C_max, how many draws gave it), the most frequent first; ties by the lower C_max
    (None, no level within the SLO, lowest)."""
    counts = Counter(draws)
    return sorted(counts.items(), key=lambda kv: (-kv[1], -1 if kv[0] is None else kv[0]))


def _c_max_text(c_max: int | None, top: int | None) -> str:
    if c_max is None:
        return "none"
    return f">= {c_max}" if top is not None and c_max >= top else str(c_max)


def describe_draws(draws: Sequence[int | None], top: int | None = None) -> str:
    """``"32 in all 10 draws"`` or ``"4 in 5 of 10 draws, 8 in 4, 2 in 1"``; "" for none.
    ``top``: the highest level swept, where a C_max is only a lower bound (``>= 64``)."""
    if not draws:
        return ""
    counts = c_max_counts(draws)
    (first, n), rest = counts[0], counts[1:]
    if not rest:
        return f"{_c_max_text(first, top)} in all {n} draws"
    others = "".join(f", {_c_max_text(c, top)} in {k}" for c, k in rest)
    return f"{_c_max_text(first, top)} in {n} of {len(draws)} draws{others}"


def is_stable(draws: Sequence[int | None]) -> bool:
    """True when every draw gave the same C_max."""
    return len(set(draws)) <= 1


def _closed_verdicts(plan: CapacityPlan) -> dict[int, bool]:
    """{concurrency: meets both SLOs} of a plan's whole levels (a simulated sweep's levels
    are all of one closed loop)."""
    return {int(lv.level.value): lv.ok for lv in plan.levels if not lv.partial}


def chance_levels(plans: Sequence[CapacityPlan]) -> list[tuple[int, int]]:
    """The levels that decide C_max by chance: (concurrency, draws in which it meets both
    SLOs) for each closed-loop level whose verdict differs between draws, lowest first.

    Only levels up to the highest first miss of any draw count: above every draw's first
    miss, a level's verdict never moves C_max (sglang-spec's c=16 may flip, but c=4 has
    already decided). A draw with no miss counts its top level as its first miss."""
    verdicts = [_closed_verdicts(plan) for plan in plans]
    if len(verdicts) < 2:
        return []
    bound = max(
        min((c for c, ok in v.items() if not ok), default=max(v, default=0)) for v in verdicts
    )
    levels = sorted({c for v in verdicts for c in v if c <= bound})
    passes = [(c, sum(v.get(c, False) for v in verdicts)) for c in levels]
    return [(c, k) for c, k in passes if 0 < k < len(verdicts)]


def describe_chance(levels: Sequence[tuple[int, int]], draws: int) -> str:
    """``"c=2 meets the SLOs in 9 of 10 draws, c=4 in 4"``; "" for none."""
    if not levels:
        return ""
    (c, k), rest = levels[0], levels[1:]
    others = "".join(f", c={c2} in {k2}" for c2, k2 in rest)
    return f"c={c} meets the SLOs in {k} of {draws} draws{others}"


__all__ = ["c_max_counts", "chance_levels", "describe_chance", "describe_draws", "is_stable"]
