"""`import_table`: published per-level tables become summary-only runs."""

from __future__ import annotations

from pathlib import Path

from servecap.storage.import_summary import import_summary


def import_table(csv_path: Path, out_dir: Path) -> list[Path]:
    """One run directory per config in `csv_path`, written under `out_dir`."""
    return import_summary(csv_path, out_dir)
