"""Load runs from paths the user names: a run directory, or a directory of runs."""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from servecap.core.config import SLO
from servecap.core.errors import UserInputError
from servecap.core.level_key import LevelKey
from servecap.core.run_info import RunInfo
from servecap.core.summary import LevelSummary
from servecap.kinds.closed import ClosedLoad
from servecap.kinds.registry import kind_of, parse_load
from servecap.kinds.window import Window
from servecap.metrics.goodput import Goodput, goodput_by_level
from servecap.metrics.level import summarise_records
from servecap.storage.run_dir import (
    REQUESTS_FILE,
    Run,
    find_run_dirs,
    iter_records,
    load_run_info,
    load_summaries,
    write_run_info,
    write_summaries,
)
from servecap.storage.safe_files import RESERVE_FILE


def load_run(run_dir: Path) -> Run:
    """A run with its level summaries; recomputed from `requests.jsonl` when absent.

    A run that never got to say how it ended (its `run.json` still says running and its
    process is gone, or cannot be checked: an old run, another host's) is marked incomplete
    and summarised from its records, so the level it stopped in is there, marked partial;
    when its process is known to be gone (SIGKILL) that is saved on disk too. A run whose
    process is still going stays running.
    """
    info = load_run_info(run_dir)
    levels = load_summaries(run_dir)
    alive = writer_alive(info) if info.status == "running" else True
    if not alive:
        # Summaries are rewritten after every level, so those on disk lack the level it
        # stopped in; "running" on disk means it never got to say how it ended.
        info.status = "incomplete"
        if (run_dir / REQUESTS_FILE).is_file():
            levels = None
    if levels is None:
        skipped: list[int] = []
        records = iter_records(run_dir / REQUESTS_FILE, skipped)
        levels = summarise_records(
            records, stored_observations(info), planned_requests(info), stored_windows(info)
        )
        if skipped:  # said, never silent: a level may have lost rows, or vanished
            info.notes.append(skipped_note(skipped))
    if alive is False:
        info.stop_reason = info.stop_reason or "killed: its process ended before finishing"
        _save_quietly(run_dir, info, levels)
    return Run(path=run_dir, info=info, levels=levels)


def skipped_note(lines: list[int]) -> str:
    shown = ", ".join(str(n) for n in lines[:5]) + (", ..." if len(lines) > 5 else "")
    return (f"{REQUESTS_FILE}: {len(lines)} unreadable or implausible row(s) skipped "
            f"(line {shown}); a torn last line of a killed run is one")


def writer_alive(info: RunInfo) -> bool | None:
    """Whether the process that wrote this run still exists; None when that cannot be told
    (no pid: an old run; or written on another host)."""
    if info.pid is None or info.host != socket.gethostname():
        return None
    try:
        os.kill(info.pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _save_quietly(run_dir: Path, info: RunInfo, levels: list[LevelSummary]) -> None:
    """Persist a killed run's status and its recomputed summaries (with the partial level),
    summaries first: a run.json saying incomplete has them. A read-only run directory is
    still read."""
    with contextlib.suppress(OSError):
        (run_dir / RESERVE_FILE).unlink(missing_ok=True)  # its process can no longer
        write_summaries(run_dir, levels)
        write_run_info(run_dir, info)


def planned_requests(info: RunInfo) -> dict[LevelKey, int] | None:
    """Requests each level of the stored plan was to send (for `partial`); None when the
    stored config does not say (a hand-made or foreign run.json)."""
    config = info.config
    try:
        if config.get("load") is not None:
            plan = parse_load(config["load"])
        elif "rounds" in config and "concurrency" in config:
            plan = ClosedLoad(concurrency=config["concurrency"], rounds=config["rounds"])
        else:
            return None
    except ValueError:  # pydantic's ValidationError is one
        return None
    return {level.key: level.planned_requests() for level in plan.levels()}


def stored_windows(info: RunInfo) -> dict[str, Window]:
    """The steady-state window of the run's load plan (by kind), from its stored config,
    so summaries recomputed from requests.jsonl leave out what the run's own did."""
    load = info.config.get("load")
    if not isinstance(load, dict):
        return {}
    try:
        spec = parse_load(load)
    except ValueError:  # pydantic's ValidationError is one
        return {}
    levels = spec.levels()  # every level of a kind shares the run's window
    window = levels[0].window() if levels else None
    return {spec.kind: window} if window is not None else {}


def run_goodput(run: Run, slo: SLO) -> dict[LevelKey, Goodput]:
    """Goodput per level that offers a rate, from the stored run's requests.jsonl (none for
    a run without such levels or without records)."""
    path = run.path / REQUESTS_FILE
    offers = any(kind_of(lv.key).offered_rate(lv.key) is not None for lv in run.levels)
    if not offers or not path.is_file():
        return {}
    return goodput_by_level(iter_records(path), stored_windows(run.info), slo)


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


def status_text(run: Run) -> str:
    """The run's status as every view shows it: `complete`, or `incomplete (why; partial
    level c=4)`, with `TLS verification off (--insecure)` when it was."""
    info = run.info
    why = [info.stop_reason] if info.stop_reason else []
    partial = [str(lv.key) for lv in run.levels if lv.partial]
    if partial:
        why.append(f"partial level {', '.join(partial)}")
    text = info.status + (f" ({'; '.join(why)})" if why and info.status != "complete" else "")
    return text + ("; TLS verification off (--insecure)" if info.insecure else "")


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
