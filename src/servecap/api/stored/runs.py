"""Stored runs for the front ends: load, list and print them (the storage layer's readers).

The CLI and the app read runs through here, so a change in how runs are stored or keyed is
made once, below this line, not in each front end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from servecap.core.errors import ServecapError
from servecap.storage.capacity_answer import answer_for
from servecap.storage.run_dir import Run, find_run_dirs
from servecap.storage.runs import load_run, load_runs, run_to_json, status_text

__all__ = [
    "Run", "RunIndex", "load_run", "load_runs", "run_to_json", "scan_results", "status_text",
]


@dataclass
class RunIndex:
    """The runs found under a results directory, and the ones that could not be read."""

    runs: list[Run] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def by_folder(self, folder: str) -> Run | None:
        return next((r for r in self.runs if r.path.name == folder), None)


# How deep `scan_results` looks below the results folder: `servecap demo --out D` keeps its
# runs in D/runs/compare-<time>/<run>, three levels down, and the app should find them there.
SCAN_DEPTH = 3


def scan_results(results_dir: Path) -> RunIndex:
    """Every run under `results_dir`, newest first (a missing directory holds none).

    Runs directly inside are found as before; folders that are not runs (a comparison's
    folder, the demo's `runs/`) are looked into too, up to `SCAN_DEPTH` levels, so the app
    lists what `servecap compare` and `servecap demo` wrote. A run's own folder is never
    entered: nothing inside a run is another run.
    """
    index = RunIndex()
    if not results_dir.is_dir():
        return index
    try:
        dirs = _runs_below(results_dir, SCAN_DEPTH)
    except ServecapError as exc:
        index.problems.append(str(exc))
        return index
    for run_dir in dirs:
        try:
            index.runs.append(load_run(run_dir))
        except (ServecapError, OSError) as exc:
            index.problems.append(f"{run_dir.name}: {exc}")
    index.runs.sort(key=lambda r: (r.info.created_at, r.path.name), reverse=True)
    return index


def _runs_below(folder: Path, depth: int) -> list[Path]:
    found = find_run_dirs(folder)
    if folder in found or depth <= 1:
        return found
    for child in sorted(folder.iterdir()):
        if child.is_dir() and not child.is_symlink() and child not in found:
            found += _runs_below(child, depth - 1)
    return found


def capacity_sentence(run: Run) -> str | None:
    """The one-sentence answer of the `servecap capacity` run `run` belongs to, if any."""
    answer = answer_for(Path(run.path))
    return answer.sentence() if answer is not None else None
