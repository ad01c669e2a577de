"""Comparisons started from the app: each in its own thread (no Streamlit here).

A comparison outlives the tab that started it; pages find it again by its id.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import Literal

from servecap.api.comparison.config import CompareConfig
from servecap.api.comparison.run import ComparisonOutcome, run_comparison
from servecap.core.errors import ServecapError
from servecap.ui.labels import message_of

CompareState = Literal["running", "done", "failed"]


@dataclass
class CompareJob:
    job_id: int
    config: CompareConfig
    state: CompareState = "running"
    error: str | None = None
    outcome: ComparisonOutcome | None = None
    finished: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        try:
            self.outcome = run_comparison(self.config)
            self.state = "done"
        except (ServecapError, OSError, RuntimeError) as exc:
            self.state, self.error = "failed", message_of(exc)
        finally:
            self.finished.set()


class CompareJobs:
    """Every comparison this app process started."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self.jobs: dict[int, CompareJob] = {}

    def start(self, config: CompareConfig) -> CompareJob:
        job = CompareJob(next(self._ids), config)
        self.jobs[job.job_id] = job
        threading.Thread(target=job.run, name=f"compare-{job.job_id}", daemon=True).start()
        return job

    def latest(self) -> CompareJob | None:
        return self.jobs[max(self.jobs)] if self.jobs else None
