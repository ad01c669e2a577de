"""How often each C_max came out across seeded draws of a simulated sweep."""

from __future__ import annotations

from servecap.stats.draws import c_max_counts, describe_draws, is_stable


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
