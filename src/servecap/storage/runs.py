"""Load runs from paths the user names: a run directory, or a directory of runs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from servecap.core.errors import UserInputError
from servecap.core.level_key import LevelKey
from servecap.core.run_info import RunInfo
from servecap.core.summary import LevelSummary
from servecap.metrics.level import summarise_records
from servecap.storage.run_dir import (
    REQUESTS_FILE,
    Run,
    find_run_dirs,
    iter_records,
    load_run_info,
    load_summaries,
)


def load_run(run_dir: Path) -> Run:
    """A run with its level summaries; recomputed from `requests.jsonl` when absent.

    A run killed before it wrote any summary (SIGKILL in its first level) is summarised from
    its records; a killed run is marked incomplete.
    """
    info = load_run_info(run_dir)
    levels = load_summaries(run_dir)
    if levels is None:
        levels = summarise_records(iter_records(run_dir / REQUESTS_FILE), stored_observations(info))
    if info.status == "running":
        # Summaries are rewritten after every level, so a killed run has those it finished;
        # "running" on disk then means it never got to say how it ended.
        info.status = "incomplete"
    return Run(path=run_dir, info=info, levels=levels)


def stored_observations(info: RunInfo) -> dict[LevelKey, dict[str, Any]]:
    """Per-level observer fields saved in run.json (`client_health`, its first observer's
    name: "64" for c=64, the key's text for other kinds), if any; only summary columns."""
    columns = set(LevelSummary.model_fields) - {"concurrency", "level"}
    observed: dict[LevelKey, dict[str, Any]] = {}
    for level, values in info.client_health.items():
        try:
            key = LevelKey.parse(level)
        except ValueError:
            continue
        if isinstance(values, dict):
            observed[key] = {k: v for k, v in values.items() if k in columns}
    return observed


def load_runs(paths: Sequence[Path | str]) -> list[Run]:
    """Every run under `paths` (each a run directory or a directory holding runs)."""
    runs: list[Run] = []
    for raw in paths:
        dirs = find_run_dirs(Path(raw))
        if not dirs:
            raise UserInputError(f"no runs found in {raw}")
        runs.extend(load_run(d) for d in dirs)
    return runs


def run_to_json(run: Run) -> str:
    """The run's metadata and summaries as one JSON document (for `show --format json`)."""
    return json.dumps(
        {
            "path": str(run.path),
            "info": run.info.model_dump(mode="json"),
            "levels": [level.model_dump(mode="json") for level in run.levels],
        },
        indent=2,
    )
