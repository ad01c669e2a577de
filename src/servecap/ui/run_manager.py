"""A process-wide owner of background benchmark runs (no Streamlit here).

A run's load goes out from a child process (`ui.run_child`): inside the Streamlit process,
which redraws pages, the client's loop lagged enough to flag its own c=1 level client-bound.
A thread per run starts the child, hands it the job (secrets on its stdin pipe) and reads
its JSON progress lines into a `RunProgress`, so the run keeps going (and is saved) when the
browser tab closes and any page in the process can reattach to it through the manager.
Cancel sends the child SIGTERM: the sweep stops scheduling and the run is kept on disk,
marked incomplete. A verify run (`start_verify`) and a capacity search (`start_capacity`)
go the same way.
"""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from servecap.api.run.run import RunOutcome, Secrets
from servecap.api.run.run_config import RunConfig
from servecap.core.errors import UserInputError
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary
from servecap.storage.runs import load_run

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
        self.request_counted(record.status == "failed")

    def request_counted(self, failed: bool) -> None:
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
    """One background run: its child process, its thread and what it reports."""

    job_id: int
    config: RunConfig | None
    request: dict[str, Any] = field(default_factory=dict)  # the child's job, secrets aside
    progress: RunProgress = field(default_factory=RunProgress)
    state: JobState = "starting"
    error: str | None = None
    user_error: bool = False
    outcome: RunOutcome | None = None
    finished: threading.Event = field(default_factory=threading.Event)
    pid: int | None = None  # the child's: the load never runs in the app's own process
    _proc: subprocess.Popen[str] | None = None
    _cancel_requested: bool = False

    @property
    def active(self) -> bool:
        return not self.finished.is_set()

    def cancel(self) -> None:
        """Ask the run to stop; it ends marked incomplete and stays on disk."""
        self._cancel_requested = True
        proc = self._proc
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)

    def _thread_main(self, secrets: Secrets) -> None:
        try:
            with tempfile.TemporaryFile("w+") as errors:
                code, ended = self._supervise(secrets, errors)
                errors.seek(0)
                last = [line for line in errors.read().splitlines() if line.strip()][-1:]
            if self.state != "failed":
                self._finish(code, ended, last)
        except Exception as exc:  # a run thread must never die silently
            self.state, self.error = "failed", f"{type(exc).__name__}: {exc}"
        finally:
            self.finished.set()
            self.progress.started_event.set()

    def _supervise(self, secrets: Secrets, errors: IO[str]) -> tuple[int, dict[str, Any]]:
        """Start the child, hand it the job and follow its progress to its end."""
        proc = subprocess.Popen(
            [sys.executable, "-m", "servecap.ui.run_child"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=errors, text=True,
        )
        self._proc, self.pid, self.state = proc, proc.pid, "running"
        assert proc.stdin is not None and proc.stdout is not None
        job = {**self.request, "api_key": secrets.api_key, "headers": secrets.headers}
        proc.stdin.write(json.dumps(job))
        proc.stdin.close()
        if self._cancel_requested:
            proc.send_signal(signal.SIGTERM)
        ended: dict[str, Any] = {}
        for line in proc.stdout:
            event = json.loads(line)
            if event["event"] in ("end", "error"):
                ended = event
            self._on_event(event)
        return proc.wait(), ended

    def _on_event(self, event: dict[str, Any]) -> None:
        kind, progress = event["event"], self.progress
        if kind == "started":
            progress.started(event["total"], event["run_dir"], event["model"])
        elif kind == "level":
            progress.level_started(LevelKey.parse(event["level"]), event["n_requests"])
        elif kind == "request":
            progress.request_counted(event["failed"])
        elif kind == "level_done":
            progress.level_done(LevelSummary.model_validate(event["summary"]))
        elif kind == "error":
            self.state, self.error = "failed", event["message"]
            self.user_error = bool(event.get("user_error"))

    def _finish(self, code: int, ended: dict[str, Any], stderr_tail: list[str]) -> None:
        run_dir = ended.get("run_dir") or self.progress.snapshot().run_dir
        if run_dir:
            run = load_run(Path(run_dir))
            self.outcome = RunOutcome(run_dir=run.path, info=run.info, levels=run.levels)
        if code not in (0, 130) or not ended:
            self.state = "failed"
            self.error = stderr_tail[0] if stderr_tail else f"the run process exited {code}"
        elif self._cancel_requested or ended.get("stopped"):
            self.state = "cancelled"
        else:
            self.state = "done"


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
        request = {"kind": "run", "config": config.model_dump(mode="json")}
        return self._start(request, config, secrets, wait_s)

    def start_verify(
        self, run_dir: Path, options: dict[str, Any], secrets: Secrets,
        wait_s: float = PREFLIGHT_WAIT_S,
    ) -> RunJob:
        """Start `servecap verify` on a saved sweep (`options`: `api.predict.verify.VerifyOptions`
        fields); bad input (no sweep, no compliant level) fails here as for `start`."""
        request = {"kind": "verify", "run": str(run_dir), "options": options}
        return self._start(request, None, secrets, wait_s)

    def start_verify_agents(
        self, run_dir: Path, task: dict[str, Any], options: dict[str, Any], secrets: Secrets,
        wait_s: float = PREFLIGHT_WAIT_S,
    ) -> RunJob:
        """Start `servecap verify --load agents` on a saved sweep (`task`: a
        `kinds.agents.AgentsLoad`, `options`: `api.predict.verify_agents.AgentsVerifyOptions`,
        both as JSON); bad input fails here as for `start`."""
        request = {"kind": "verify_agents", "run": str(run_dir), "task": task,
                   "options": options}
        return self._start(request, None, secrets, wait_s)

    def start_capacity(
        self, config: RunConfig, options: dict[str, Any], secrets: Secrets,
        wait_s: float = PREFLIGHT_WAIT_S, targets: list[str] | None = None,
    ) -> RunJob:
        """Start `servecap capacity` (`options`: `api.capacity.capacity.CapacityOptions`
        fields); its answer is written beside the runs' folder, `config.out_dir`'s parent.
        `targets` (`NAME=BASE_URL`, two or more): each searched in turn, as `--target`."""
        request = {"kind": "capacity", "config": config.model_dump(mode="json"),
                   "options": options, "targets": targets or []}
        return self._start(request, config, secrets, wait_s)

    def _start(
        self, request: dict[str, Any], config: RunConfig | None, secrets: Secrets,
        wait_s: float,
    ) -> RunJob:
        with self._lock:
            if self._jobs and self._jobs[-1].active:
                raise UserInputError("a run is already in progress: cancel it or wait")
            job = RunJob(job_id=next(self._ids), config=config, request=request)
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

    def shutdown(self, timeout: float = 10.0) -> None:
        """Cancel the current run and wait for it (tests, process exit)."""
        job = self.current
        if job is not None and job.active:
            job.cancel()
            job.finished.wait(timeout)
