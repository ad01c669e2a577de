"""The order a comparison runs its (target, level, repeat) slots in.

Repeat by repeat, level by level (a full sweep per repeat, so the repeats spread over the
whole comparison and catch its drift), the targets run one after another in a seeded order
that rotates each repeat: with two targets A B, then B A, then A B ("A1 B1 B2 A2 ..."), with
k targets a Latin square, so over k repeats each target takes each position once per level
and neither a warm-up effect nor a slow drift favours one of them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Slot:
    """One run of one level by one target: its position in the order, from 0."""

    position: int
    target: str
    level_index: int
    repeat: int


def interleaved_order(
    targets: Sequence[str], n_levels: int, repeats: int, seed: int = 0
) -> list[Slot]:
    """Every (target, level, repeat) once, in the balanced interleaved order."""
    if len(targets) < 1 or n_levels < 1 or repeats < 1:
        raise ValueError("an order needs a target, a level and a repeat")
    slots: list[Slot] = []
    for repeat in range(repeats):
        for level in range(n_levels):
            base = list(targets)
            random.Random(f"{seed}:{level}").shuffle(base)  # the same base for every repeat
            shift = repeat % len(base)
            for target in base[shift:] + base[:shift]:
                slots.append(Slot(len(slots), target, level, repeat))
    return slots
