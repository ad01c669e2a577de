"""A process-wide owner of background benchmark runs (no Streamlit here).

A run lives in its own thread with its own event loop, so it keeps going (and is saved)
when the browser tab closes; any page in the process can reattach to it through the manager.
Cancel sets the run's `stop` event: the sweep stops scheduling and the run is kept on disk,
marked incomplete.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from dataclasses import dataclass, field
from typing import Literal

from servecap.api.loop import loop_factory
from servecap.api.run import RunOutcome, Secrets, run_benchmark_async
from servecap.core.config import RunConfig
from servecap.core.errors import UserInputError
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary

JobState = Literal["starting", "running", "done", "cancelled", "failed"]
PREFLIGHT_WAIT_S = 45.0


@dataclass
class LevelProgress:
    """Requests done so far at one level (`level` is its key's text, e.g. `c=32`)."""

    level: str
    n_requests: int
    done: int = 0
    failed: int = 0


@dataclass
class ProgressSnapshot:
    """A consistent copy of a run's progress, safe to render from another thread."""

    total: int
    done: int
    failed: int
    run_dir: str
    model: str
    levels: list[LevelProgress]
    summaries: list[LevelSummary]


class RunProgress:
    """A thread-safe `ProgressSink`: the run thread writes, pages read snapshots."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.started_event = threading.Event()
        self._total = 0
        self._done = 0
        self._failed = 0
        self._run_dir = ""
        self._model = ""
        self._levels: dict[LevelKey, LevelProgress] = {}
        self._current: LevelKey | None = None
        self._summaries: list[LevelSummary] = []

    def started(self, total_requests: int, run_dir: str, model: str) -> None:
        with self._lock:
            self._total, self._run_dir, self._model = total_requests, run_dir, model
        self.started_event.set()

    def level_started(self, level: LevelKey, n_requests: int) -> None:
        with self._lock:
            self._levels[level] = LevelProgress(str(level), n_requests)
            self._current = level

    def request_done(self, record: RequestRecord) -> None:
        failed = record.status == "failed"
        with self._lock:
            self._done += 1
            self._failed += int(failed)
            level = self._levels.get(self._current) if self._current is not None else None
            if level is not None:
                level.done += 1
                level.failed += int(failed)

    def level_done(self, summary: LevelSummary) -> None:
        with self._lock:
            self._summaries.append(summary)

    def snapshot(self) -> ProgressSnapshot:
        with self._lock:
            return ProgressSnapshot(
                total=self._total, done=self._done, failed=self._failed,
                run_dir=self._run_dir, model=self._model,
                levels=[LevelProgress(**vars(lv)) for lv in self._levels.values()],
                summaries=list(self._summaries),
            )


@dataclass
class RunJob:
    """One background run: its thread, its stop event and what it reports."""

    job_id: int
    config: RunConfig
    progress: RunProgress = field(default_factory=RunProgress)
    state: JobState = "starting"
    error: str | None = None
    user_error: bool = False
    outcome: RunOutcome | None = None
    finished: threading.Event = field(default_factory=threading.Event)
    _loop: asyncio.AbstractEventLoop | None = None
    _stop: asyncio.Event | None = None
    _cancel_requested: bool = False

    @property
    def active(self) -> bool:
        return not self.finished.is_set()

    def cancel(self) -> None:
        """Ask the run to stop; it ends marked incomplete and stays on disk."""
        self._cancel_requested = True
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(stop.set)

    async def _main(self, secrets: Secrets) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        if self._cancel_requested:
            self._stop.set()
        self.state = "running"
        self.outcome = await run_benchmark_async(self.config, secrets, self.progress, self._stop)

    def _thread_main(self, secrets: Secrets) -> None:
        try:
            with asyncio.Runner(loop_factory=loop_factory()) as runner:
                runner.run(self._main(secrets))
            self.state = "cancelled" if self._cancel_requested else "done"
        except UserInputError as exc:
            self.state, self.error, self.user_error = "failed", str(exc), True
        except Exception as exc:  # a run thread must never die silently
            self.state, self.error = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            self.finished.set()
            self.progress.started_event.set()


class RunManager:
    """Starts runs in background threads; one run at a time per process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._jobs: list[RunJob] = []

    @property
    def current(self) -> RunJob | None:
        """The latest job (running or finished), for a page to reattach to."""
        with self._lock:
            return self._jobs[-1] if self._jobs else None

    def start(
        self, config: RunConfig, secrets: Secrets, wait_s: float = PREFLIGHT_WAIT_S
    ) -> RunJob:
        """Start a run; waits through preflight so bad input fails here, before any load.

        Raises `UserInputError` when a run is already going or preflight rejects the input
        (unreachable server, unknown model); then nothing was started or saved.
        """
        with self._lock:
            if self._jobs and self._jobs[-1].active:
                raise UserInputError("a run is already in progress: cancel it or wait")
            job = RunJob(job_id=next(self._ids), config=config)
            self._jobs.append(job)
        thread = threading.Thread(
            target=job._thread_main, args=(secrets,), name=f"servecap-ui-run-{job.job_id}",
            daemon=True,
        )
        thread.start()
        job.progress.started_event.wait(wait_s)
        if job.finished.is_set() and job.user_error and not job.progress.snapshot().run_dir:
            with self._lock:
                self._jobs.remove(job)
            raise UserInputError(job.error or "the run could not start")
        return job

    def cancel_current(self) -> None:
        job = self.current
        if job is not None and job.active:
            job.cancel()

    def shutdown(self, timeout: float = 10.0) -> None:
        """Cancel the current run and wait for it (tests, process exit)."""
        job = self.current
        if job is not None and job.active:
            job.cancel()
            job.finished.wait(timeout)
