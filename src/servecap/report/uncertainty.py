"""The report's uncertainty tables: bootstrap intervals and verdicts per level, C_max's bracket.

Rows of text like `report.views` (the renderers escape). Intervals are the 95% percentile
bootstrap stored per level (`stats.bootstrap`); a verdict is pass or fail only when the whole
interval is on one side of the SLO, else undecided. Runs recorded before intervals existed
show "n/a" and their point verdict.
"""

from __future__ import annotations

from servecap.analysis.slo import SloCell
from servecap.core.numbers import fmt_number
from servecap.report.model import ReportModel
from servecap.report.verified import verify_runs
from servecap.report.views import Table


def _label(stat: str) -> str:
    return "P90" if stat == "p90" else "mean"


def _ci(estimate: float | None, ci: list[float] | None, digits: int) -> str:
    if estimate is None:
        return ""
    text = fmt_number(estimate, digits)
    if ci is None:
        return f"{text} (CI n/a)"
    return f"{text} [{fmt_number(ci[0], digits)}, {fmt_number(ci[1], digits)}]"


def _span(ci: list[float] | None, digits: int) -> str:
    return f"[{fmt_number(ci[0], digits)}, {fmt_number(ci[1], digits)}]" if ci else "n/a"


def _row(cell: SloCell) -> list[str]:
    return [
        cell.config,
        str(cell.level),
        fmt_number(cell.n_ok) if cell.n_ok is not None else "",
        _ci(cell.ttft, cell.ttft_ci, 1),
        _ci(cell.tps, cell.tps_ci, 1),
        _span(cell.latency_ci, 2),
        f"{cell.ttft_verdict or 'n/a'} / {cell.tps_verdict or 'n/a'} -> {cell.verdict or 'n/a'}",
        "; ".join(cell.warnings),
    ]


def interval_table(model: ReportModel, stat: str) -> Table:
    """Every level's TTFT, TPS and latency on `stat` with 95% intervals, and its verdicts."""
    label = _label(stat)
    return Table(
        title=f"Uncertainty ({label}; 95% bootstrap intervals; verdict TTFT / TPS -> level)",
        header=["config", "level", "successful requests", f"TTFT {label} ms",
                f"TPS {label} tok/s", f"latency {label} s (CI)", "verdict", "warnings"],
        rows=[_row(c) for c in model.analysis.slo.matrix[stat]],
    )


def bracket_table(model: ReportModel, stat: str) -> Table:
    """C_max with the level below it, the first level that misses, and the binding SLO."""
    label = _label(stat)
    rows = [
        [
            r.config,
            fmt_number(r.c_max) if r.c_max else "none",
            fmt_number(r.below) if r.below is not None else "none",
            fmt_number(r.above) if r.above is not None else "none measured",
            ", ".join(r.binding) or "-",
            r.verdict_at_c_max or "n/a",
            r.verdict_above or "n/a",
        ]
        for r in model.analysis.slo.capacity[stat]
    ]
    return Table(
        title=f"C_max bracket ({label})",
        header=["config", "C_max", "level below", "first level missing", "binding SLO",
                "verdict at C_max", "verdict above"],
        rows=rows,
    )


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:+.1f}%"


def verification_table(model: ReportModel) -> Table | None:
    """Predicted users (Little's law on the sweep) beside the users a verify run measured:
    every verify run of a reported sweep (beside it or reported) and every reported one."""
    rows = []
    for found in verify_runs(model.runs):
        result, at = found.result, found.result.at_predicted
        rows.append([
            found.config, found.directory.name, f"{result.predicted_users} (predicted)",
            f"{result.verified_users} (verified)" if result.verified_users else "none verified",
            _pct(result.prediction_error),
            f"{_label(result.statistic)} TTFT <= {result.slo.ttft_ms:g} ms, TPS >= "
            f"{result.slo.tps:g}, think {result.think}", at.verdict,
            f"{fmt_number(at.mean_concurrency, 2)} vs C_max {result.c_max}",
            f"{fmt_number(at.law_concurrency, 2)} ({_pct(at.law_error)})",
            result.search_message or "no search",
        ])
    if not rows:
        return None
    return Table(
        title="Users: predicted (Little's law on C_max) against verified (measured N users)",
        header=["config", "verify run", "predicted users", "verified users", "prediction error",
                "SLOs", "verdict at predicted N",
                "mean concurrency at predicted N", "N*R/(R+Z) (law error)", "search"],
        rows=rows,
    )


def uncertainty_tables(model: ReportModel) -> list[Table]:
    """Predicted vs verified users (verify runs only), then the bracket and interval tables
    on P90 and on the mean."""
    verified = verification_table(model)
    tables = [verified] if verified is not None else []
    return tables + [
        t for s in ("p90", "mean") for t in (bracket_table(model, s), interval_table(model, s))
    ]
