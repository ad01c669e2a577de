"""`import_table` and `import_files`: other tools' results and published tables become runs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from servecap.storage.formats.registry import import_paths
from servecap.storage.import_summary import import_summary


def import_table(csv_path: Path, out_dir: Path) -> list[Path]:
    """One run directory per config in `csv_path`, written under `out_dir`."""
    return import_summary(csv_path, out_dir)


def import_files(paths: Sequence[Path], out_dir: Path) -> list[Path]:
    """Runs from other tools' files (AIPerf, GuideLLM, SGLang bench_serving, vLLM, Benchmark
    Report, the seed's CSV), the format detected per file; every file is read and checked
    before any run is written."""
    return import_paths(paths, out_dir)
