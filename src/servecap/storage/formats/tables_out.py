"""A run as two flat tables for analysts (pandas, DuckDB, Polars): Parquet or CSV.

`requests.<ext>`: one row a request (warm-up included, flagged), its raw stamps and counts as
stored, its level's key as text, whether the level's statistics count it (`counted`: not
warm-up, inside the kind's steady-state window) and its metrics in servecap's definitions
(TTFT, ITL, TPS, latency; empty for a failure). The chunk stamps stay in requests.jsonl: a
list a cell is no table. `levels.<ext>`: the level summaries, one row a level, `level` its
key's text; a nested value (failures by reason, intervals, histograms) is a JSON string.
Parquet needs pyarrow (the `parquet` extra), imported only here, when asked for.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from servecap.core.errors import SettingError, UserInputError
from servecap.core.records import RequestRecord
from servecap.core.request_metrics import request_metrics
from servecap.core.summary import LevelSummary
from servecap.kinds.registry import kind_of
from servecap.kinds.window import apply_window
from servecap.storage.run_dir import Run
from servecap.storage.runs import stored_windows
from servecap.storage.safe_files import atomic_file, make_dir, neutralise_cell, write_atomic

TABLE_FORMATS: tuple[str, ...] = ("parquet", "csv")
_LEFT_OUT = ("chunk_at", "chunk_tokens", "level")  # lists stay in requests.jsonl; key below
RECORD_COLUMNS: tuple[str, ...] = tuple(
    f.name for f in fields(RequestRecord) if f.name not in _LEFT_OUT
)
METRIC_COLUMNS: tuple[str, ...] = ("n_chunks", "ttft_ms", "itl_ms", "tps", "latency_s")
REQUEST_COLUMNS: tuple[str, ...] = ("level", "counted", *RECORD_COLUMNS, *METRIC_COLUMNS)
LEVEL_COLUMNS: tuple[str, ...] = (
    "level", *(name for name in LevelSummary.model_fields if name not in ("concurrency", "level"))
)


def _cell(value: Any) -> Any:
    """A nested value as a JSON string: one type a column, for every reader."""
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return value


def _counted_ids(run: Run, records: list[RequestRecord]) -> set[int]:
    """Ids (`id()`) of the records their level's statistics count (not warm-up, in window)."""
    by_level: dict[Any, list[RequestRecord]] = {}
    for record in records:
        if not record.warmup:
            by_level.setdefault(record.key, []).append(record)
    windows = stored_windows(run.info)
    counted: set[int] = set()
    for key, rows in by_level.items():
        window = windows.get(kind_of(key).name)
        kept = apply_window(rows, window).kept if window is not None else rows
        counted.update(id(r) for r in kept)
    return counted


def request_rows(run: Run) -> list[dict[str, Any]]:
    """The requests table's rows, in the order requests.jsonl holds them."""
    records = list(run.iter_records())
    counted = _counted_ids(run, records)
    rows = []
    for record in records:
        metrics = request_metrics(record)
        row: dict[str, Any] = {"level": str(record.key), "counted": id(record) in counted}
        row.update({name: _cell(getattr(record, name)) for name in RECORD_COLUMNS})
        row.update(n_chunks=len(record.chunk_at), ttft_ms=None, itl_ms=None, tps=None,
                   latency_s=None)
        if metrics is not None:
            row.update(
                ttft_ms=metrics.ttft_ns / 1e6,
                itl_ms=None if metrics.itl_ns is None else metrics.itl_ns / 1e6,
                tps=metrics.tps, latency_s=metrics.latency_ns / 1e9,
            )
        rows.append(row)
    return rows


def level_rows(run: Run) -> list[dict[str, Any]]:
    """The levels table's rows, one a level summary, in the run's order."""
    rows = []
    for level in run.levels:
        data = level.model_dump(mode="json")
        row = {"level": str(level.key)}
        row.update({name: _cell(data[name]) for name in LEVEL_COLUMNS[1:]})
        rows.append(row)
    return rows


def _write_csv(path: Path, columns: Sequence[str], rows: list[dict[str, Any]]) -> Path:
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=list(columns))
    writer.writeheader()
    for row in rows:  # a cell a spreadsheet could run as a formula is neutralised
        writer.writerow({k: neutralise_cell("" if v is None else v) for k, v in row.items()})
    return write_atomic(path, text.getvalue())


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise SettingError(
            "{format} parquet needs pyarrow, which is not installed: "
            "pip install 'servecap[parquet]' (or use csv)", "format") from exc
    return pa, pq


def _write_parquet(path: Path, columns: Sequence[str], rows: list[dict[str, Any]]) -> Path:
    pa, pq = _pyarrow()
    table = pa.Table.from_pylist(rows, schema=None) if rows else pa.table(
        {name: pa.array([], type=pa.null()) for name in columns})
    table = table.select(list(columns))
    with atomic_file(path) as handle:  # atomic, 0600, never through a link
        pq.write_table(table, handle)
    return path


def write_tables(run: Run, fmt: str, out_dir: Path) -> list[Path]:
    """`requests.<fmt>` and `levels.<fmt>` of `run` in `out_dir` (made if missing)."""
    if fmt not in TABLE_FORMATS:
        raise UserInputError(f"unknown table format {fmt!r}: use one of {', '.join(TABLE_FORMATS)}")
    if fmt == "parquet":
        _pyarrow()  # said before anything is written
    write = _write_parquet if fmt == "parquet" else _write_csv
    target = make_dir(out_dir)
    return [
        write(target / f"requests.{fmt}", REQUEST_COLUMNS, request_rows(run)),
        write(target / f"levels.{fmt}", LEVEL_COLUMNS, level_rows(run)),
    ]
