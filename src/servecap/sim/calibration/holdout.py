"""Held-out error: how well a profile predicts levels its fit never saw.

A fit's own error (the levels it was fitted to) says little about what a profile promises:
answers at concurrencies that were not measured. So the calibrator also fits on part of the
levels and predicts the rest:

- four or more levels: one train/test split. The fit sees the lowest, the middle and the
  highest level (the seed's 1, 8 and 64 of 1..64) and predicts all the others;
- three levels: the middle one is left out (fit on the two ends, predict the middle);
- one or two levels: no held-out error (nothing to predict from).

``leave_one_out`` (what ``servecap sim calibrate`` reports) instead predicts each level
between the lowest and the highest from a fit on all the others, one fit per level: every
measured level is tested, the user's own, not a split chosen for the seed's 1..64.

With several workloads (a run at 128/128 and one at 512/32, say), the split is made on the
workload with the most levels; the other workloads' levels all stay in the fit.

Held-out levels lie between fitted ones: this is the error of interpolating a sweep, the
question the simulator is asked most. Extrapolating beyond the highest measured level is
not covered by it (and is less trustworthy).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from servecap.sim.model.params import ModelParams
from servecap.sim.model.sweep import (
    DEFAULT_WORKLOAD,
    METRICS,
    TAIL_METRICS,
    Workload,
    by_workload,
    fit_errors,
    sweep_like,
    workload_label,
    workload_of,
)

Rows = list[dict[str, float]]
#: fits params to rows (the calibrator's own fit, with its settings)
FitFn = Callable[[Rows], ModelParams]


Split = tuple[list[int], list[int]]  # (train, test) concurrency levels


def split_levels(levels: Sequence[int]) -> Split | None:
    """(train, test) concurrency levels, or None when there are too few to hold any out."""
    ordered = sorted(set(levels))
    if len(ordered) < 3:
        return None
    if len(ordered) == 3:
        return [ordered[0], ordered[2]], [ordered[1]]
    train = sorted({ordered[0], ordered[(len(ordered) - 1) // 2], ordered[-1]})
    return train, [c for c in ordered if c not in train]


def describe_split(
    train: Sequence[int], test: Sequence[int], workload: Workload = DEFAULT_WORKLOAD,
    others: Sequence[Workload] = (),
) -> str:  # fmt: skip
    """``"fit on c=1,8,64; predicted c=2,4,16,32"``, with the workload where it is not
    128/128 and the other workloads the fit also saw: ``"... (512/32; the fit also saw
    128/128)"``."""
    text = f"fit on c={','.join(map(str, train))}; predicted c={','.join(map(str, test))}"
    return text + _notes(workload, others)


def _notes(workload: Workload, others: Sequence[Workload]) -> str:
    """`` (512/32; the fit also saw 128/128)``: the workload where it is not 128/128, and the
    other workloads the fit saw; empty where there is nothing to say."""
    notes = [workload_label(workload)] if workload != DEFAULT_WORKLOAD or others else []
    if others:
        notes.append("the fit also saw " + ", ".join(map(workload_label, others)))
    return f" ({'; '.join(notes)})" if notes else ""


def per_metric(errs: dict[str, float]) -> dict[str, float]:
    """Mean absolute relative error per metric from ``fit_errors`` cells."""
    out: dict[str, float] = {}
    for metric in (*METRICS, *TAIL_METRICS):
        cells = [v for k, v in errs.items() if k.endswith(f" {metric}")]
        if cells:
            out[metric] = float(np.mean(cells))
    return out


@dataclass(frozen=True)
class HeldOut:
    """A fit on the train levels and its prediction of the test levels."""

    params: ModelParams  # fitted on the train levels only
    train: Rows  # the measured rows it was fitted to
    target: Rows  # the measured rows it predicts
    pred: Rows  # its sweep of the target's levels
    split: str  # describe_split's text


def _main_workload(rows: Rows) -> tuple[Workload, list[int], list[Workload]]:
    """The workload with the most levels, its levels, and the other workloads."""
    groups = by_workload(rows)
    workload = max(groups, key=lambda w: len({int(r["concurrency"]) for r in groups[w]}))
    levels = sorted({int(r["concurrency"]) for r in groups[workload]})
    return workload, levels, [w for w in groups if w != workload]


def _at(rows: Rows, workload: Workload, levels: Sequence[int]) -> Rows:
    return [r for r in rows if workload_of(r) == workload and int(r["concurrency"]) in levels]


def holdout(
    rows: Rows, fit_fn: FitFn, prompt_lengths: Sequence[int] = (),
    train_levels: Sequence[int] | None = None,
) -> HeldOut | None:  # fmt: skip
    """Fit on the train levels and sweep the test levels, each row at its own workload (the
    128/128 rows with ``prompt_lengths`` where given, as ``sweep_like``); None when there are
    too few. ``train_levels``: fit on these instead of ``split_levels``'s (a what-if: which
    levels a user would measure)."""
    workload, levels, others = _main_workload(rows)
    split = split_levels(levels) if train_levels is None else _chosen_split(levels, train_levels)
    if split is None:
        return None
    train, test = split
    target = _at(rows, workload, test)
    held_out = {id(r) for r in target}
    fitted_on = [r for r in rows if id(r) not in held_out]
    params = fit_fn(fitted_on)
    pred = sweep_like(params, target, 10, prompt_lengths=prompt_lengths)
    return HeldOut(params, fitted_on, target, pred, describe_split(train, test, workload, others))


def leave_one_out(rows: Rows, fit_fn: FitFn, prompt_lengths: Sequence[int] = ()) -> HeldOut | None:
    """Each level between the lowest and the highest of the main workload predicted by a fit
    on all the other rows (one fit per level); None with fewer than three levels. The
    returned ``params`` are the last of those fits."""
    workload, levels, others = _main_workload(rows)
    inner = levels[1:-1]
    if not inner:
        return None
    pred: Rows = []
    target: Rows = []
    params = None
    for level in inner:
        left_out = _at(rows, workload, [level])
        params = fit_fn([r for r in rows if all(r is not x for x in left_out)])
        pred += sweep_like(params, left_out, 10, prompt_lengths=prompt_lengths)
        target += left_out
    assert params is not None
    if len(inner) == 1:
        text = describe_split([levels[0], levels[-1]], inner, workload, others)
    else:
        each = f"c={','.join(map(str, inner))}, each predicted by a fit on the others"
        text = f"leave one level out: {each}{_notes(workload, others)}"
    return HeldOut(params, rows, target, pred, text)


def _chosen_split(levels: list[int], train_levels: Sequence[int]) -> Split | None:
    """``levels`` split into the measured ones of ``train_levels`` and the rest; None where
    either side is empty."""
    train = [c for c in levels if c in train_levels]
    test = [c for c in levels if c not in train_levels]
    return (train, test) if train and test else None


def error_table(prefix: str, pred: Rows, target: Rows) -> dict[str, float]:
    """``[calibration]`` entries: ``{prefix}_mape`` and ``{prefix}_max_cell_error`` over the
    four means (the published error), and ``{prefix}_{metric}`` per metric, the P90 TTFT
    included where measured (rounded as the profile writes them)."""
    means = fit_errors(pred, target)
    out = {f"{prefix}_mape": round(means["mape"], 4),
           f"{prefix}_max_cell_error": round(means["max"], 4)}  # fmt: skip
    cells = fit_errors(pred, target, (*METRICS, *TAIL_METRICS))
    out.update({f"{prefix}_{m}": round(v, 4) for m, v in per_metric(cells).items()})
    return out


__all__ = [
    "FitFn", "HeldOut", "describe_split", "error_table", "holdout", "leave_one_out", "per_metric",
    "split_levels",
]  # fmt: skip
