"""How often each C_max came out across seeded draws of a simulated sweep."""

from __future__ import annotations

from servecap.core.level_key import LevelKey
from servecap.stats.capacity import CapacityPlan, LevelVerdict
from servecap.stats.draws import (
    c_max_counts,
    chance_levels,
    describe_chance,
    describe_draws,
    is_stable,
)


def test_counts_put_the_most_frequent_first_and_ties_low_first() -> None:
    assert c_max_counts([4, 8, 2, 4, 8, 4]) == [(4, 3), (8, 2), (2, 1)]
    assert c_max_counts([8, 2, None]) == [(None, 1), (2, 1), (8, 1)]


def test_a_stable_and_an_unstable_c_max_read_differently() -> None:
    assert describe_draws([32] * 10) == "32 in all 10 draws"
    assert describe_draws([2, 4, 8, 4, 8, 4, 4, 4, 8, 8]) == "4 in 5 of 10 draws, 8 in 4, 2 in 1"
    assert is_stable([32, 32]) and not is_stable([2, 4])


def test_a_c_max_at_the_top_level_is_a_lower_bound_and_none_is_named() -> None:
    assert describe_draws([64, 64, 32], top=64) == ">= 64 in 2 of 3 draws, 32 in 1"
    assert describe_draws([None, 1]) == "none in 1 of 2 draws, 1 in 1"
    assert describe_draws([]) == ""


def _draw(ttft_ok: dict[int, bool], tps_ok: dict[int, bool] | None = None) -> CapacityPlan:
    """One draw's plan: each closed level's verdicts (only the verdicts matter here)."""
    levels = [LevelVerdict(level=LevelKey.closed(c), ttft=1.0, tps=1.0, ttft_ok=ok,
                           tps_ok=(tps_ok or {}).get(c, True)) for c, ok in ttft_ok.items()]
    return CapacityPlan(c_max=None, latency_mean_s=None, users=None, levels=levels)


def test_the_levels_that_decide_c_max_by_chance_are_named() -> None:
    """sglang-spec's case: c=2 and c=4 flip between draws, so C_max is 1, 2 or 4. c=16
    flips too, but above every draw's first miss (4, 8, 2) it never moves C_max."""
    draws = [
        _draw({1: True, 2: True, 4: False, 8: False, 16: True}),
        _draw({1: True, 2: True, 4: True, 8: False, 16: False}),
        _draw({1: True, 2: False, 4: True, 8: False, 16: False}),
    ]
    assert chance_levels(draws) == [(2, 2), (4, 2)]
    text = describe_chance(chance_levels(draws), 3)
    assert text == "c=2 meets the SLOs in 2 of 3 draws, c=4 in 2"
    # a TPS miss is a miss too
    tps = [_draw({1: True, 2: True}), _draw({1: True, 2: True}, tps_ok={2: False})]
    assert chance_levels(tps) == [(2, 1)]


def test_no_level_decides_by_chance_when_every_draw_agrees_or_there_is_one() -> None:
    same = _draw({1: True, 2: True, 4: False})
    assert chance_levels([same, same]) == [] and describe_chance([], 2) == ""
    assert chance_levels([_draw({1: True, 4: False, 8: True})]) == []  # one draw
    # a draw where every level passed counts its top level as its first miss
    assert chance_levels([_draw({1: True, 4: True}), _draw({1: True, 4: False})]) == [(4, 1)]
