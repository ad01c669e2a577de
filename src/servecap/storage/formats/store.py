"""Write an `ImportedRun` as a run directory servecap can plan, report and compare.

Per-request levels keep their records (`requests.jsonl`) and their summaries are servecap's
own statistics of them (`metrics.level`), so TTFT, ITL and TPS mean what they mean for a run
servecap made; summary-only levels are stored as the file gave them. What could not be
mapped is in `run.json`'s `imported` block and its notes, where every view finds it.
"""

from __future__ import annotations

from pathlib import Path

from servecap import __version__
from servecap.core.run_info import RunInfo
from servecap.core.summary import LevelSummary
from servecap.metrics.level import summarise_level
from servecap.storage.formats.imported import ImportedLevel, ImportedRun
from servecap.storage.run_dir import (
    REQUESTS_FILE,
    RecordWriter,
    new_run_dir,
    write_run_info,
    write_summaries,
)

OWN_STATISTICS = (
    "per-request data kept: TTFT, ITL, TPS and latency are servecap's own statistics of "
    "{tool}'s per-request timings, as defined for servecap's runs (docs/concepts/measurements.md)"
)
AGGREGATES_ONLY = (
    "summary-only: {tool}'s file holds aggregates; the values are {tool}'s own, as published "
    "by it (see the unmapped fields and definition differences)"
)


# A foreign file keeps no target time beside its send time, so the client's own lateness
# (which servecap measures for its runs) is unknown: left empty, not shown as 0.
NOT_MEASURED = {
    name: None for name in (
        "send_lateness_mean_ms", "send_lateness_p99_ms", "send_lateness_max_ms",
        "send_gap_mean_ms", "send_gap_p99_ms", "send_gap_max_ms",
    )
}


def level_summary(level: ImportedLevel) -> LevelSummary:
    """servecap's summary of a per-request level, with what the file states in place of
    what its records cannot give; a summary-only level as read."""
    if level.summary is not None:
        return level.summary
    summary = summarise_level(level.key, level.records)
    return summary.model_copy(update={**NOT_MEASURED, **level.overrides})


def run_info(run: ImportedRun) -> RunInfo:
    """The run's metadata: marked imported, with its tool, files and unmapped fields."""
    kind = OWN_STATISTICS if run.per_request else AGGREGATES_ONLY
    notes = [kind.format(tool=run.tool), *run.notes]
    notes += [f"not mapped: {item}" for item in run.unmapped]
    return RunInfo(
        name=run.name,
        source="imported",
        status="complete",
        tool_version=__version__,
        config={"imported_from": ", ".join(run.files)},
        notes=notes,
        imported={
            "format": run.format,
            "tool": run.tool,
            "tool_version": run.tool_version,
            "files": run.files,
            "per_request": run.per_request,
            "unmapped": run.unmapped,
        },
    )


def store_run(run: ImportedRun, out_dir: Path) -> Path:
    """Write `run` under `out_dir`; returns its new run directory."""
    levels = sorted(run.levels, key=lambda level: level.key)
    summaries = [level_summary(level) for level in levels]  # before any file is written
    run_dir = new_run_dir(out_dir, run.name)
    write_run_info(run_dir, run_info(run))
    if any(level.records for level in levels):
        writer = RecordWriter(run_dir / REQUESTS_FILE)
        try:
            for level in levels:
                for record in level.records:
                    writer.write(record)
        finally:
            writer.close()
    write_summaries(run_dir, summaries)
    return run_dir
