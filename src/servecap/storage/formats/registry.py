"""The foreign formats `servecap import` knows, and which one a path is.

Each format module answers `detects(path, head)` (head: the file's first 64 KiB as text)
and `read(path) -> ImportedRun`; the seed's Appendix A CSV keeps its own reader and writer
(`storage.import_summary`). Every path is read and checked before anything is written, so
a bad file among several leaves no run behind.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from servecap.core.errors import DataFormatError, UserInputError
from servecap.storage.formats import (
    aiperf_in,
    br_in,
    guidellm_in,
    sglang_bench_in,
    vllm_bench_in,
)
from servecap.storage.formats.imported import ImportedLevel, ImportedRun
from servecap.storage.formats.store import store_run
from servecap.storage.import_summary import import_summary, read_summary_table

HEAD_BYTES = 65536


@dataclass(frozen=True)
class Format:
    name: str
    label: str
    detects: Callable[[Path, str], bool]
    read: Callable[[Path], ImportedRun] | None  # None: the seed table's own writer


def _csv_detects(path: Path, head: str) -> bool:
    """Any `.csv` is the seed's table (its reader names what is wrong with it, as
    `import-summary` always did), and so is a table headed by its two required columns."""
    first = head.split("\n", 1)[0]
    return path.suffix.lower() == ".csv" or ("config" in first and "concurrency" in first)


FORMATS: tuple[Format, ...] = (
    Format(aiperf_in.NAME, aiperf_in.LABEL, aiperf_in.detects, aiperf_in.read),
    Format(guidellm_in.NAME, guidellm_in.LABEL, guidellm_in.detects, guidellm_in.read),
    # before SGLang's: a vLLM result is one JSON line too, told apart by its tokenizer_id
    Format(vllm_bench_in.NAME, vllm_bench_in.LABEL, vllm_bench_in.detects, vllm_bench_in.read),
    Format(sglang_bench_in.NAME, sglang_bench_in.LABEL, sglang_bench_in.detects,
           sglang_bench_in.read),
    Format(br_in.NAME, br_in.LABEL, br_in.detects, br_in.read),
    Format("appendix-csv", "the seed's Appendix A table (CSV: config, concurrency, ...)",
           _csv_detects, None),
)


def known_formats() -> str:
    return "; ".join(f"{f.name}: {f.label}" for f in FORMATS)


def _head(path: Path) -> str:
    if path.is_dir():
        return ""
    try:
        with path.open("rb") as handle:
            return handle.read(HEAD_BYTES).decode("utf-8", errors="replace")
    except OSError as exc:
        raise UserInputError(f"cannot read {path}: {exc.strerror or exc}") from exc


def detect(path: Path) -> Format:
    """The format of `path`, or exit 2 listing the formats known."""
    if not path.exists():
        raise UserInputError(f"cannot read {path}: no such file or folder")
    head = _head(path)
    for fmt in FORMATS:
        if fmt.detects(path, head):
            return fmt
    raise DataFormatError(f"{path}: not a format servecap can import. Known: {known_formats()}")


def merge(runs: list[ImportedRun]) -> ImportedRun:
    """Runs of one tool given together (AIPerf's one file per level) as one run."""
    first = runs[0]
    levels: list[ImportedLevel] = []
    for run in runs:
        for level in run.levels:
            if any(other.key == level.key for other in levels):
                raise DataFormatError(f"two files give level {level.key} "
                                      f"({', '.join(f for r in runs for f in r.files)})")
            levels.append(level)
    unmapped = list(dict.fromkeys(item for run in runs for item in run.unmapped))
    notes = list(dict.fromkeys(item for run in runs for item in run.notes))
    return ImportedRun(
        name=first.name, tool=first.tool, tool_version=first.tool_version, format=first.format,
        files=[f for run in runs for f in run.files], levels=levels, unmapped=unmapped,
        notes=notes,
    )


def import_paths(paths: Sequence[Path], out_dir: Path) -> list[Path]:
    """Import every path (files of one foreign format together become one run); returns
    the run directories written."""
    by_format: dict[str, list[ImportedRun]] = {}
    tables: list[Path] = []
    for path in paths:
        fmt = detect(path)
        if fmt.read is None:
            read_summary_table(path)  # checked now, written below
            tables.append(path)
        else:
            by_format.setdefault(fmt.name, []).append(fmt.read(path))
    merged = [merge(runs) for runs in by_format.values()]
    written = [store_run(run, out_dir) for run in merged]
    for table in tables:
        written.extend(import_summary(table, out_dir))
    return written
