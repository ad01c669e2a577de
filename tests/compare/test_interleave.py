"""The interleaved order: complete, seeded, balanced."""

from __future__ import annotations

from collections import Counter

import pytest

from servecap.load.interleave import interleaved_order


def test_two_targets_alternate_a1_b1_b2_a2() -> None:
    slots = interleaved_order(["A", "B"], n_levels=1, repeats=4, seed=0)
    names = [s.target for s in slots]
    first = names[0]
    other = "B" if first == "A" else "A"
    assert names == [first, other, other, first, first, other, other, first]
    assert [s.repeat for s in slots] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert [s.position for s in slots] == list(range(8))


def test_every_slot_once_and_each_target_in_each_position_equally() -> None:
    targets = ["a", "b", "c"]
    slots = interleaved_order(targets, n_levels=4, repeats=3, seed=11)
    assert Counter((s.target, s.level_index, s.repeat) for s in slots) == Counter(
        {(t, lv, r): 1 for t in targets for lv in range(4) for r in range(3)}
    )
    for level in range(4):
        per_position: Counter[tuple[str, int]] = Counter()
        for repeat in range(3):
            run = [s.target for s in slots if s.level_index == level and s.repeat == repeat]
            per_position.update((t, i) for i, t in enumerate(run))
        assert set(per_position.values()) == {1}  # a Latin square per level


def test_seeded_order_repeats_and_seeds_differ() -> None:
    one = interleaved_order(["x", "y", "z"], 5, 2, seed=1)
    assert one == interleaved_order(["x", "y", "z"], 5, 2, seed=1)
    orders = {tuple(s.target for s in interleaved_order(["x", "y", "z"], 5, 1, seed=k))
              for k in range(6)}
    assert len(orders) > 1


def test_an_empty_order_is_refused() -> None:
    with pytest.raises(ValueError):
        interleaved_order([], 1, 1)
    with pytest.raises(ValueError):
        interleaved_order(["a"], 1, 0)
