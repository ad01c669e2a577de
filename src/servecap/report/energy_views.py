"""The report's energy table: per level of each `--power-metrics` run, mean power, energy
and J per output token over the level's token window (`metrics.energy`), C_max and peak
throughput marked; a level the scrapes did not cover says why instead of a number."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from servecap.core.numbers import fmt_number
from servecap.core.summary import LevelSummary
from servecap.report.model import ReportModel
from servecap.report.views import Table

ENERGY_HEADER = ["config", "level", "at", "mean power (W)", "W samples mean", "energy (J)",
                 "J / output token", "output tokens", "note"]


def _num(value: Any, digits: int) -> str:
    return fmt_number(value, digits) if isinstance(value, int | float) else "n/a"


def energy_cells(e: dict[str, Any]) -> list[str]:
    """W, W samples, J, J/token, tokens and the note of one energy block."""
    return [_num(e.get("power_mean_w"), 1), _num(e.get("power_samples_mean_w"), 1),
            _num(e.get("energy_j"), 2), _num(e.get("j_per_output_token"), 4),
            _num(e.get("output_tokens"), 0), str(e.get("note") or "")]


def energy_rows(config: str, levels: Sequence[LevelSummary], marks: dict[str, str]
                ) -> list[list[str]]:
    """One row per level with an energy block; `marks`: level text -> "C_max"/"peak"."""
    rows = []
    for level in levels:
        e = level.energy
        if not e:
            continue
        rows.append([config, str(level.key), marks.get(str(level.key), ""), *energy_cells(e)])
    return rows


def _marks(model: ReportModel, name: str, stat: str) -> dict[str, str]:
    row = model.analysis.slo.capacity_of(stat, name)
    run = model.run(name)
    rated = [lv for lv in run.levels if lv.output_tok_s is not None]
    peak = max(rated, key=lambda lv: lv.output_tok_s or 0.0, default=None)
    marks: dict[str, str] = {}
    if peak is not None:
        marks[str(peak.key)] = "peak"
    if row is not None and row.top is not None:
        marks[str(row.top)] = "C_max" + (" and peak" if marks.get(str(row.top)) else "")
    return marks


def energy_table(model: ReportModel, stat: str = "p90") -> Table | None:
    """None when no reported run was measured with `--power-metrics`."""
    rows = [row for run in model.runs
            for row in energy_rows(run.name, run.levels, _marks(model, run.name, stat))]
    if not rows:
        return None
    label = "P90" if stat == "p90" else "mean"
    return Table(title=f"Energy per level (C_max on {label}; over each level's token window)",
                 header=ENERGY_HEADER, rows=rows)


def energy_tables(model: ReportModel) -> list[Table]:
    table = energy_table(model, model.options.slo.statistic)
    return [table] if table is not None else []
