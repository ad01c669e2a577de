"""Held-out error: how well a profile predicts levels its fit never saw.

A fit's own error (the levels it was fitted to) says little about what a profile promises:
answers at concurrencies that were not measured. So the calibrator also fits on part of the
levels and predicts the rest:

- four or more levels: one train/test split. The fit sees the lowest, the middle and the
  highest level (the seed's 1, 8 and 64 of 1..64) and predicts all the others;
- three levels: the middle one is left out (fit on the two ends, predict the middle);
- one or two levels: no held-out error (nothing to predict from).

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
    notes = [workload_label(workload)] if workload != DEFAULT_WORKLOAD or others else []
    if others:
        notes.append("the fit also saw " + ", ".join(map(workload_label, others)))
    return f"{text} ({'; '.join(notes)})" if notes else text


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


def holdout(
    rows: Rows, fit_fn: FitFn, prompt_lengths: Sequence[int] = (),
    train_levels: Sequence[int] | None = None,
) -> HeldOut | None:  # fmt: skip
    """Fit on the train levels and sweep the test levels, each row at its own workload (the
    128/128 rows with ``prompt_lengths`` where given, as ``sweep_like``); None when there are
    too few. ``train_levels``: fit on these instead of ``split_levels``'s (a what-if: which
    levels a user would measure)."""
    groups = by_workload(rows)
    workload = max(groups, key=lambda w: len({int(r["concurrency"]) for r in groups[w]}))
    levels = sorted({int(r["concurrency"]) for r in groups[workload]})
    split = split_levels(levels) if train_levels is None else _chosen_split(levels, train_levels)
    if split is None:
        return None
    train, test = split
    others = [w for w in groups if w != workload]
    target = [r for r in groups[workload] if int(r["concurrency"]) in test]
    held_out = {id(r) for r in target}
    fitted_on = [r for r in rows if id(r) not in held_out]
    params = fit_fn(fitted_on)
    pred = sweep_like(params, target, 10, prompt_lengths=prompt_lengths)
    return HeldOut(params, fitted_on, target, pred, describe_split(train, test, workload, others))


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
    "FitFn", "HeldOut", "describe_split", "error_table", "holdout", "per_metric", "split_levels",
]  # fmt: skip
