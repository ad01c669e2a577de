"""Which fitted parameters the measured levels leave loose, and which level would pin each down.

A fit can only learn a parameter from levels whose numbers it moves. A parameter that acts in
a regime none of the measured levels enters (sglang-spec's eager speculation, above 8
sequences with speculation on, is met only at c = 16 and 32) comes out of the fit wherever
the search happened to leave it, and the simulator's answers between the measured levels rest
on that guess. Nothing in the fit error shows it: the held-out error does, but only where a
held-out level falls in that regime.

So, after a fit, each fitted parameter is moved by ``STEP`` of its fitting range (both ways,
within the range) and the profile is swept again, seeded as before, at the measured levels and
at the levels between them on a doubling grid. A parameter is *loose* when the move changes
some unmeasured cell (a mean, or the P90 TTFT) by at least ``LOOSE_MOVE`` and at least
``LOOSE_RATIO`` times as much as it changes any measured cell: the measurements cannot tell
its values apart, the levels between them can. Measuring the level where it moved most pins
it down.

Pure: seeded sweeps in virtual time, no clock, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from servecap.sim.calibration.fitting import from_unit, to_unit
from servecap.sim.model.params import ModelParams
from servecap.sim.model.sweep import (
    METRICS,
    TAIL_METRICS,
    by_workload,
    closed_loop_sweep,
    fit_errors,
)

# a fifth of the fitting range: large enough to move a cell in the regime the parameter acts
# in by well over sampling noise, small enough to stay near the fitted value
STEP = 0.2
LOOSE_MOVE = 0.10
LOOSE_RATIO = 5.0
Rows = list[dict[str, float]]


@dataclass(frozen=True)
class Loose:
    """A fitted parameter the measured levels do not pin down."""

    name: str
    cell: str  # the unmeasured cell it moves most: "c=16 itl_mean_ms"
    move: float  # how much, relative
    measured_move: float  # the most it moves any measured cell

    def text(self) -> str:
        return (f"{self.name} (moves {self.cell} by {self.move:.0%}, the measured levels by "
                f"{self.measured_move:.0%} at most)")  # fmt: skip


def between_levels(levels: Sequence[int]) -> list[int]:
    """The doubling grid from the lowest to the highest level, less the levels themselves."""
    measured = sorted(set(levels))
    grid, c = [], 1
    while c < measured[-1]:
        if c > measured[0] and c not in measured:
            grid.append(c)
        c *= 2
    return grid


def _sweep(params: ModelParams, rows: Rows, rounds: int, seed: int) -> tuple[Rows, Rows]:
    """The measured levels' rows and the in-between levels' rows, each workload at its lengths."""
    measured: Rows = []
    between: Rows = []
    for (prompt, output), group in by_workload(rows).items():
        levels = sorted({int(r["concurrency"]) for r in group})
        swept = closed_loop_sweep(params, levels + between_levels(levels), rounds, prompt,
                                  output, seed)  # fmt: skip
        measured += [r for r in swept if int(r["concurrency"]) in levels]
        between += [r for r in swept if int(r["concurrency"]) not in levels]
    return measured, between


def _moves(moved: Rows, base: Rows) -> dict[str, float]:
    """Each cell's relative change from ``base`` (the means and the P90 TTFT)."""
    cells = fit_errors(moved, base, METRICS + TAIL_METRICS)
    return {k: v for k, v in cells.items() if k not in ("mape", "max")}


def loose_parameters(
    params: ModelParams, names: Sequence[str], rows: Rows, rounds: int = 10, seed: int = 0
) -> list[Loose]:
    """The parameters among ``names`` (fitted, in ``params``) that the levels of ``rows`` (the
    measured levels, each with its workload) leave loose; see the module docstring."""
    base_measured, base_between = _sweep(params, rows, rounds, seed)
    if not base_between:
        return []
    out = []
    for name in names:
        worst: Loose | None = None
        u = to_unit(name, float(getattr(params, name)))
        for target in {min(1.0, u + STEP), max(0.0, u - STEP)} - {u}:
            moved = params.model_copy(update={name: from_unit(name, target)})
            measured, between = _sweep(moved, rows, rounds, seed)
            near = max(_moves(measured, base_measured).values(), default=0.0)
            far = _moves(between, base_between)
            cell = max(far, key=lambda k: far[k], default=None)
            if cell is None or far[cell] < LOOSE_MOVE or far[cell] < LOOSE_RATIO * near:
                continue
            if worst is None or far[cell] > worst.move:
                worst = Loose(name, cell, far[cell], near)
        if worst is not None:
            out.append(worst)
    return out


def levels_to_measure(loose: Sequence[Loose]) -> list[str]:
    """The levels that would pin the loose parameters down (``"c=16"``, ``"512/32 c=2"``)."""
    return sorted({item.cell.rsplit(" ", 1)[0] for item in loose}, key=_level_key)


def _level_key(level: str) -> tuple[str, int]:
    head, _, c = level.rpartition("c=")
    return head, int(c)
