"""The schedulers by load kind (a plain dict: a new kind is one file and one line here)."""

from __future__ import annotations

from servecap.core.load_spec import LevelSpec, OpenLevel
from servecap.load.closed_loop import run_closed_level
from servecap.load.fixed import run_fixed_level
from servecap.load.open_loop import level_offsets_ns, run_open_level
from servecap.load.replay import run_replay_level
from servecap.load.scheduler import Scheduler
from servecap.load.sessions import run_sessions_level

SCHEDULERS: dict[str, Scheduler] = {
    "closed": run_closed_level,
    "fixed": run_fixed_level,
    "replay": run_replay_level,
    "sessions": run_sessions_level,
    "open": run_open_level,
}


def planned_requests(level: LevelSpec) -> int:
    """How many requests `level` will send: its `n_requests`, except an open loop bounded by
    a duration, whose count is its arrivals' (its `n_requests` is only rate x duration)."""
    if isinstance(level, OpenLevel) and level.duration_s is not None:
        return len(level_offsets_ns(level))
    return level.n_requests
