"""Load runs from paths the user names: a run directory, or a directory of runs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from servecap.core.errors import UserInputError
from servecap.core.records import ClientHealth
from servecap.core.run_info import RunInfo
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

    A run killed before it wrote its summary (SIGKILL) is summarised from its records and
    marked incomplete.
    """
    info = load_run_info(run_dir)
    levels = load_summaries(run_dir)
    if levels is None:
        levels = summarise_records(iter_records(run_dir / REQUESTS_FILE), stored_health(info))
        if info.status == "running":
            info.status = "incomplete"
    return Run(path=run_dir, info=info, levels=levels)


def stored_health(info: RunInfo) -> dict[int, ClientHealth]:
    """Per-level client health saved in run.json (`client_health`), if any."""
    health: dict[int, ClientHealth] = {}
    for level, values in info.client_health.items():
        try:
            health[int(level)] = ClientHealth(**values)
        except (TypeError, ValueError):
            continue
    return health


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
