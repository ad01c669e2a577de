"""CSV tables: one per config in the seed's Appendix A layout, combined, SLO, capacity, speedup.

Every cell goes through `neutralise_cell`, so a run name like `=HYPERLINK(...)` stays text.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path

from servecap.report.model import ReportModel, RunMeta
from servecap.report.verified import verified_users
from servecap.storage.safe_files import make_dir, neutralise_cell, safe_name, write_atomic

# After the level's own column (its kind's quantity: `concurrency` for a closed loop).
APPENDIX_COLUMNS = (
    "ttft_mean_ms",
    "ttft_p90_ms",
    "itl_mean_ms",
    "itl_p90_ms",
    "tps_mean",
    "tps_p90",
    "latency_mean_s",
    "latency_p90_s",
    "rps",
)
EXTRA_COLUMNS = ("system_rps", "aggregate_output_tok_s", "aggregate_source", "n_ok", "failures")


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[object]]) -> Path:
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow([neutralise_cell(h) for h in header])
    for row in rows:
        writer.writerow([neutralise_cell("" if v is None else v) for v in row])
    return write_atomic(path, text.getvalue())


def appendix_header(model: ReportModel) -> list[str]:
    return [model.analysis.level_kind.quantity, *APPENDIX_COLUMNS]


def _r(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def appendix_rows(model: ReportModel, run: RunMeta) -> list[list[object]]:
    agg = model.analysis.aggregate(run.name)
    sources = {p.level: p.source for p in agg.points}
    system = {p.level: p.rps for p in model.analysis.throughput[run.name]}
    rows = []
    for lv in run.levels:
        base: list[object] = [lv.key.value, *(getattr(lv, col) for col in APPENDIX_COLUMNS)]
        fails = sum(lv.failures.values()) if lv.failures else lv.n_failed
        rows.append(
            [
                *base,
                _r(system.get(lv.key)),
                _r(agg.at(lv.key), 1),
                sources.get(lv.key),
                lv.n_ok,
                fails,
            ]
        )
    return rows


def write_tables(model: ReportModel, out: Path) -> list[Path]:
    """Write every table into `out` (created); returns the files."""
    make_dir(out)
    header = [*appendix_header(model), *EXTRA_COLUMNS]
    files: list[Path] = []
    combined: list[list[object]] = []
    for i, run in enumerate(model.runs, start=1):
        rows = appendix_rows(model, run)
        name = f"appendix-{i:02d}-{safe_name(run.name)}.csv"
        files.append(write_csv(out / name, header, rows))
        combined.extend([run.name, *row] for row in rows)
    files.append(write_csv(out / "combined.csv", ["config", *header], combined))
    files.append(_slo_table(model, out))
    files.append(_capacity_table(model, out))
    files.append(_speedup_table(model, out))
    files.append(_consistency_table(model, out))
    return files


def _slo_table(model: ReportModel, out: Path) -> Path:
    slo = model.analysis.slo
    rows = [
        [stat, c.config, c.level.value, _r(c.ttft), _r(c.tps), c.ttft_ok, c.tps_ok, c.marks]
        for stat, cells in slo.matrix.items()
        for c in cells
    ]
    quantity = model.analysis.level_kind.quantity
    header = ["statistic", "config", quantity, "ttft_ms", "tps", "ttft_ok", "tps_ok", "marks"]
    return write_csv(out / "slo_matrix.csv", header, rows)


def _capacity_table(model: ReportModel, out: Path) -> Path:
    slo = model.analysis.slo
    verified = verified_users(model.runs, model.options.slo)
    rows = [
        [
            r.statistic,
            r.config,
            r.c_max,
            _r(r.latency_mean_s),
            r.users,
            slo.slo.ttft_ms,
            slo.slo.tps,
            slo.slo.think_time_s,
            r.c_max_lower_bound,
            verified(r.config, r.statistic),
        ]
        for rows in slo.capacity.values()
        for r in rows
    ]
    header = [
        "statistic",
        "config",
        "c_max",
        "latency_mean_s",
        "users",
        "ttft_slo_ms",
        "tps_slo",
        "think_time_s",
        "c_max_lower_bound",  # every tested level passed: test higher
        "verified_users",  # measured by a verify run (empty: not verified; 0: none passed)
    ]
    return write_csv(out / "capacity.csv", header, rows)


def _speedup_table(model: ReportModel, out: Path) -> Path:
    rows = [
        [
            sp.pair.spec,
            sp.pair.base,
            p.level.value,
            _r(p.spec_tps),
            _r(p.base_tps),
            _r(p.ratio),
            _r(sp.break_even, 2),
        ]
        for sp in model.analysis.speedups
        for p in sp.points
    ]
    kind = model.analysis.level_kind
    header = [
        "spec", "base", kind.quantity, "spec_tps", "base_tps", "ratio", f"break_even_{kind.prefix}"
    ]
    return write_csv(out / "speedup.csv", header, rows)


def _consistency_table(model: ReportModel, out: Path) -> Path:
    rows = [
        [
            r.config,
            r.level.value,
            r.ttft_ms,
            r.itl_ms,
            r.tokens,
            r.tokens_source,
            _r(r.predicted_s),
            r.latency_s,
            _r(r.deviation),
            r.ok,
        ]
        for r in model.analysis.consistency
    ]
    header = [
        "config",
        model.analysis.level_kind.quantity,
        "ttft_ms",
        "itl_ms",
        "tokens",
        "tokens_source",
        "predicted_s",
        "latency_s",
        "deviation",
        "consistent",
    ]
    return write_csv(out / "consistency.csv", header, rows)
