"""The tables of predicted beside measured (`report.predicted`): rows of text like
`report.views`, which the renderers escape."""

from __future__ import annotations

from servecap.core.numbers import fmt_number
from servecap.report.predicted import COMPARED, PredictedCapacity, PredictedRun
from servecap.report.views import Table
from servecap.stats.draws import describe_chance, describe_draws


def _pair(cell: tuple[float | None, float | None], digits: int) -> str:
    meas, pred = cell
    if meas is None or pred is None:
        return f"{fmt_number(meas, digits)} / {fmt_number(pred, digits)}"
    error = f"{(pred - meas) / meas:+.0%}" if meas else "n/a"
    return f"{fmt_number(meas, digits)} / {fmt_number(pred, digits)} ({error})"


def _c_max(c_max: int | None, lower_bound: bool) -> str:
    if c_max is None:
        return "none"
    return f">= {c_max}" if lower_bound else str(c_max)


def level_table(run: PredictedRun) -> Table:
    """Per level: measured / predicted (relative error) for each compared metric."""
    errors = run.errors()
    mean = f"mean error {sum(errors) / len(errors):.1%}" if errors else "no cell to compare"
    note = f"; {run.note}" if run.note else ""
    return Table(
        title=(f"Predicted beside measured: {run.config} and profile {run.profile} at "
               f"{run.workload} ({run.label}; {run.error}; {mean} over these cells{note})"),
        header=["level", *(f"{title} (measured / predicted)" for title, _, _ in COMPARED)],
        rows=[
            [str(c), *(_pair(cells.get(key, (None, None)), digits) for _, key, digits in COMPARED)]
            for c, cells in sorted(run.levels.items())
        ],
    )  # fmt: skip


def _draws(cap: PredictedCapacity) -> str:
    """``"2 in 6 of 10 draws, 4 in 3, 1 in 1; c=2 meets the SLOs in 9 of 10 draws, c=4 in
    3"``: the draws' C_max, then the levels that decide it by chance."""
    counted = describe_draws(cap.predicted_c_max_draws, cap.top_level)
    if not counted:
        return "n/a"
    which = describe_chance(cap.predicted_chance_levels, len(cap.predicted_c_max_draws))
    return f"{counted}; {which}" if which else counted


def capacity_table(run: PredictedRun) -> Table:
    """C_max and users on each statistic, measured beside predicted."""
    return Table(
        title=f"Capacity predicted beside measured: {run.config} and profile {run.profile}",
        header=["statistic", "C_max measured", "C_max predicted", "users measured",
                "users predicted", "predicted C_max across seeded draws",
                "predicted users run on the model (thinking between requests)"],
        rows=[
            ["P90" if cap.statistic == "p90" else "mean",
             _c_max(cap.measured_c_max, cap.measured_lower_bound),
             _c_max(cap.predicted_c_max, cap.predicted_lower_bound),
             fmt_number(cap.measured_users), fmt_number(cap.predicted_users),
             _draws(cap), cap.users_check.cell() if cap.users_check else "n/a"]
            for cap in run.capacity
        ],
    )  # fmt: skip


def predicted_tables(runs: list[PredictedRun]) -> list[Table]:
    """Both tables for every predicted run, in the report's run order."""
    return [table for run in runs for table in (level_table(run), capacity_table(run))]


__all__ = ["capacity_table", "level_table", "predicted_tables"]
