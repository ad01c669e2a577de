"""`servecap run --find-cmax`: after the closed grid, bisect C_max between grid levels.

The SLO flags are plan's (`--ttft-slo-ms`, `--tps-slo`, `--stat`); they only judge the
levels the search adds, and are stored in `run.json` so the run says what it searched for.
"""

from __future__ import annotations

from typing import Annotated

import typer
from pydantic import ValidationError

from servecap.cli.common import SLO_DEFAULTS, SLO_FLAGS, StatChoice
from servecap.core.config import SLO, FindCmax
from servecap.core.errors import UserInputError
from servecap.core.validation import user_input_error

DEFAULTS = FindCmax()

FindCmaxOption = Annotated[bool, typer.Option(
    "--find-cmax", help="After the grid, bisect the concurrency between the last passing and "
    "the first failing level (each probe is a level of the run)")]
BudgetOption = Annotated[int | None, typer.Option(
    help=f"--find-cmax: most levels to add (default {DEFAULTS.budget})")]
CmaxTtftOption = Annotated[float, typer.Option(
    "--ttft-slo-ms", help="--find-cmax: TTFT objective, ms")]
CmaxTpsOption = Annotated[float, typer.Option(
    "--tps-slo", help="--find-cmax: per-user TPS objective, tok/s")]
CmaxStatOption = Annotated[StatChoice, typer.Option(
    "--stat", help="--find-cmax: p90 (tail) or mean")]

STAT_DEFAULT = StatChoice(SLO_DEFAULTS.statistic)


def find_cmax(
    on: bool, budget: int | None, slo: tuple[float, float, StatChoice], other_load: str | None
) -> FindCmax | None:
    """The search the flags ask for, None without `--find-cmax`; bad input raises
    `UserInputError` (exit 2) before any load. `other_load` names a non-closed load flag."""
    ttft_ms, tps, stat = slo
    if not on:
        if budget is not None:
            raise UserInputError("--budget sets --find-cmax's extra levels: it needs --find-cmax")
        return None
    if other_load is not None:
        raise UserInputError(f"--find-cmax refines a concurrency grid: drop {other_load}")
    try:
        judged = SLO(ttft_ms=ttft_ms, tps=tps, statistic=stat.value)
        return FindCmax(slo=judged, budget=DEFAULTS.budget if budget is None else budget)
    except ValidationError as exc:
        raise user_input_error(exc, {**SLO_FLAGS, "budget": "--budget"}) from None
