"""How stable a predicted C_max is: the C_max of each seeded draw of a simulated sweep.

A simulated sweep is one random draw, as a measured one is: its P90 rests on the same
10 x c requests a level of 10 rounds has. Where a level's P90 lies near the SLO, C_max moves
a whole level from one draw to the next (the seed's sglang-spec at c=4: a P90 of 1,111 ms
against a 1 s SLO; its profile gives C_max 2, 4 or 8 across ten draws). One C_max would hide
that; the C_max of each of several seeded draws, counted, shows it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence


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


__all__ = ["c_max_counts", "describe_draws", "is_stable"]
