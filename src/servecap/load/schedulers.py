"""The schedulers by load kind (a plain dict: a new kind is one file and one line here)."""

from __future__ import annotations

from servecap.load.closed_loop import run_closed_level
from servecap.load.fixed import run_fixed_level
from servecap.load.replay import run_replay_level
from servecap.load.scheduler import Scheduler
from servecap.load.sessions import run_sessions_level

SCHEDULERS: dict[str, Scheduler] = {
    "closed": run_closed_level,
    "fixed": run_fixed_level,
    "replay": run_replay_level,
    "sessions": run_sessions_level,
}
