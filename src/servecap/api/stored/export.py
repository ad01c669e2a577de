"""`export_run`: a stored run in other tools' formats (`servecap export`, the app's Results).

`br`: llm-d Benchmark Report v0.2.1 partials, one a level (storage.formats.br_out), by
default into the run's own `br/`, where a run writes them as it ends; `parquet` and `csv`:
the requests and level-summary tables (storage.formats.tables_out), by default into the
run's `tables/`. Every problem with the input or the output place is a `UserInputError`.
"""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from pathlib import Path

from servecap.core.errors import UserInputError
from servecap.storage.formats.br_out import BR_DIR, run_partials, write_run_partials
from servecap.storage.formats.tables_out import TABLE_FORMATS, write_tables
from servecap.storage.run_dir import Run, is_run_dir
from servecap.storage.runs import load_run

EXPORT_FORMATS: tuple[str, ...] = ("br", *TABLE_FORMATS)
TABLES_DIR = "tables"


def default_out(run_dir: Path, fmt: str) -> Path:
    """Where `fmt` goes when no `--out` is given: inside the run's own folder."""
    return run_dir / (BR_DIR if fmt == "br" else TABLES_DIR)


def export_run(run_dir: Path, fmt: str, out_dir: Path | None = None) -> list[Path]:
    """Write `run_dir` as `fmt` into `out_dir` (default `default_out`); the files written."""
    if fmt not in EXPORT_FORMATS:
        raise UserInputError(f"unknown format {fmt!r}: use one of {', '.join(EXPORT_FORMATS)}")
    if not is_run_dir(run_dir):
        raise UserInputError(f"{run_dir} is not a run directory (no run.json in it)")
    run = load_run(run_dir)
    target = out_dir if out_dir is not None else default_out(run.path, fmt)
    if target.exists() and not target.is_dir():
        raise UserInputError(f"cannot write into {target}: it is a file, not a directory")
    try:
        paths = write_run_partials(run, target) if fmt == "br" else write_tables(run, fmt, target)
    except OSError as exc:
        raise UserInputError(f"cannot write into {target}: {exc.strerror or exc}") from exc
    if not paths:
        raise UserInputError(f"{run_dir} has no finished level to export")
    return paths


def br_zip(run: Run) -> bytes:
    """The run's BR partials as a zip (the app's download), built in memory."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, document in run_partials(run):
            archive.writestr(f"{BR_DIR}/{name}", json.dumps(document, indent=2) + "\n")
    return buffer.getvalue()


def tables_zip(run: Run, fmt: str) -> bytes:
    """The run's requests and levels tables as a zip (the app's download)."""
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory(prefix="servecap-tables-") as tmp:
        paths = write_tables(run, fmt, Path(tmp))
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in paths:
                archive.write(path, f"{TABLES_DIR}/{path.name}")
    return buffer.getvalue()
