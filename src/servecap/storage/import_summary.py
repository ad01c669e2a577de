"""Import a published per-level table (the seed's Appendix A layout) as summary-only runs."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from pydantic import ValidationError

from servecap import __version__
from servecap.core.errors import DataFormatError
from servecap.core.run_info import RunInfo
from servecap.core.summary import SUMMARY_COLUMNS, LevelSummary
from servecap.core.validation import first_problem
from servecap.storage.run_dir import new_run_dir, write_run_info, write_summaries
from servecap.storage.safe_files import read_text_file

REQUIRED_COLUMNS = ("config", "concurrency")
# Measured quantities that cannot be below 0 (times, rates, counts, shares).
NON_NEGATIVE = (
    "n_", "error_rate", "ttft_", "ttfa_", "itl_", "chunk_gap_", "tps_", "decode_tps_",
    "latency_", "rps", "output_tok_s", "wall_s", "served_concurrency", "prompt_tokens_",
    "completion_tokens_", "input_tokens_", "output_tokens_",
)
SEED_NOTE = (
    "imported summary: values are as published; a published tps_p90 may be the upper "
    "90th percentile (the seed's convention), not servecap's low tail"
)


def read_summary_table(path: Path) -> dict[str, list[LevelSummary]]:
    """Levels per config from a CSV with a `config` column and LevelSummary columns."""
    text = read_text_file(path, "summary CSV")
    try:
        return _parse_table(path, text)
    except csv.Error as exc:
        raise DataFormatError(f"{path}: not a readable CSV table ({exc})") from exc


def _parse_table(path: Path, text: str) -> dict[str, list[LevelSummary]]:
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    unknown = [c for c in header if c not in SUMMARY_COLUMNS and c != "config"]
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"missing column(s): {', '.join(missing)}")
        if unknown:
            parts.append(f"unknown column(s): {', '.join(unknown)}")
        raise DataFormatError(f"{path}: {'; '.join(parts)}")
    configs: dict[str, list[LevelSummary]] = {}
    for line_no, row in enumerate(reader, start=2):
        extra = row.get(None)  # DictReader keeps cells beyond the header under None
        if extra:
            raise DataFormatError(
                f"{path}:{line_no}: {len(extra)} cell(s) beyond the header's "
                f"{len(header)} columns: {', '.join(repr(str(c)[:40]) for c in extra[:3])}"
            )
        clean = {k.strip(): (v or "").strip() for k, v in row.items() if k is not None}
        config = clean.pop("config")
        if not config:
            raise DataFormatError(f"{path}:{line_no}: empty config name")
        values = {k: v for k, v in clean.items() if v != ""}
        _check_finite(path, line_no, values)
        try:
            level = LevelSummary.model_validate(values)
        except ValidationError as exc:
            raise DataFormatError(f"{path}:{line_no}: {first_problem(exc)}") from exc
        if any(other.key == level.key for other in configs.get(config, [])):
            raise DataFormatError(f"{path}:{line_no}: a second row for {config} at {level.key}")
        configs.setdefault(config, []).append(level)
    if not configs:
        raise DataFormatError(f"{path}: no rows")
    return configs


def _check_finite(path: Path, line_no: int, values: dict[str, str]) -> None:
    """`nan` or `inf` in a cell is no measurement (and no JSON a report can carry)."""
    for name, text in values.items():
        try:
            number = float(text)
        except ValueError:
            continue
        if not math.isfinite(number):
            raise DataFormatError(f"{path}:{line_no}: {name}: {text!r} is not a finite number")
        if number < 0 and name.startswith(NON_NEGATIVE):
            raise DataFormatError(f"{path}:{line_no}: {name}: {text!r} is negative")


def import_summary(path: Path, out_dir: Path) -> list[Path]:
    """Write one summary-only run per config; returns the new run directories."""
    configs = read_summary_table(path)
    written = []
    for config, levels in configs.items():
        levels.sort(key=lambda lv: lv.key)
        run_dir = new_run_dir(out_dir, config)
        info = RunInfo(
            name=config,
            source="imported",
            status="complete",
            tool_version=__version__,
            config={"imported_from": path.name},
            notes=[SEED_NOTE],
        )
        write_run_info(run_dir, info)
        write_summaries(run_dir, levels)
        written.append(run_dir)
    return written
