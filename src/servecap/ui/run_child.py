"""The app's runs in their own process: `python -m servecap.ui.run_child` (no Streamlit here).

The Streamlit process draws pages; a load generator inside it lags with every redraw (the
app's own c=1 level was once flagged client-bound for it). So the app starts this child, which
runs servecap's api (`run_benchmark`, or `verify`) on its own event loop and core, and
reports progress as one JSON object a line on stdout:

    {"event": "started", "total": N, "run_dir": ..., "model": ...}
    {"event": "level", "level": "c=4", "n_requests": N}
    {"event": "request", "failed": false}
    {"event": "level_done", "summary": {...LevelSummary...}}
    {"event": "end", "run_dir": ...}                       (the run ended, complete or not)
    {"event": "error", "message": ..., "user_error": true}   (bad input: nothing started)

The job arrives on stdin as one JSON object, `{"kind": "run"|"verify"|"verify_agents"|
"capacity", "config": ..., "run": ..., "task": ..., "options": ..., "api_key": ...,
"headers": {...}}`: secrets travel on the pipe, never in argv or the environment of other
processes. SIGTERM or SIGINT stops
scheduling and the run ends marked incomplete (`end` with `"stopped": true`), as with Ctrl-C on
`servecap run`; the child also stops so when its parent (the app) goes away.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from servecap.api.run.run import RunConfig, run_benchmark
from servecap.core.errors import ServecapError, UserInputError
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.secrets import Secrets
from servecap.core.summary import LevelSummary
from servecap.ui.labels import message_of

PARENT_POLL_S = 1.0


class JsonProgress:
    """A `ProgressSink` that writes each event as a JSON line (flushed: the app polls)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.run_dir = ""
        self.gone = False

    def emit(self, event: dict[str, Any]) -> None:
        if self.gone:
            return
        try:
            self.out.write(json.dumps(event) + "\n")
            self.out.flush()
        except (BrokenPipeError, ValueError):  # the app went away: the run still saves
            self.gone = True

    def started(self, total_requests: int, run_dir: str, model: str) -> None:
        self.run_dir = run_dir
        self.emit({"event": "started", "total": total_requests, "run_dir": run_dir,
                    "model": model})

    def level_started(self, level: LevelKey, n_requests: int) -> None:
        self.emit({"event": "level", "level": str(level), "n_requests": n_requests})

    def request_done(self, record: RequestRecord) -> None:
        self.emit({"event": "request", "failed": record.status == "failed"})

    def level_done(self, summary: LevelSummary) -> None:
        self.emit({"event": "level_done", "summary": summary.model_dump(mode="json")})


def _watch_parent(parent: int) -> None:
    """Stop (and save) when the app that started this run exits without saying so."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os.kill(os.getpid(), signal.SIGINT)


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM as Ctrl-C: asyncio's runner then cancels the run, which saves it incomplete."""
    signal.raise_signal(signal.SIGINT)


def _run(job: dict[str, Any], progress: JsonProgress) -> None:
    secrets = Secrets(api_key=job.get("api_key") or None, headers=dict(job.get("headers") or {}))
    if job.get("kind") == "verify":
        from servecap.api.predict.verify import VerifyOptions, verify

        verify(Path(job["run"]), VerifyOptions.model_validate(job["options"]), secrets,
               progress)
        return
    if job.get("kind") == "verify_agents":
        from servecap.api.predict.verify_agents import AgentsVerifyOptions, verify_agents
        from servecap.kinds.agents import AgentsLoad

        verify_agents(Path(job["run"]), AgentsLoad.model_validate(job["task"]),
                      AgentsVerifyOptions.model_validate(job["options"]), secrets, progress)
        return
    if job.get("kind") == "capacity" and job.get("targets"):
        _capacity_targets(job, secrets, progress)
        return
    if job.get("kind") == "capacity":
        from servecap.api.capacity.by_load import find_capacity
        from servecap.api.capacity.capacity import CapacityOptions

        find_capacity(RunConfig.model_validate(job["config"]),
                      CapacityOptions.model_validate(job["options"]), secrets, progress)
        return
    run_benchmark(RunConfig.model_validate(job["config"]), secrets, progress)


def _capacity_targets(job: dict[str, Any], secrets: Secrets, progress: JsonProgress) -> None:
    """`capacity --target`: every target's search reports to the one progress stream, from
    its own thread, so the events pass one at a time."""
    from servecap.api.capacity.capacity import CapacityOptions
    from servecap.api.capacity.targets import find_capacities, targets_from

    config = RunConfig.model_validate(job["config"])
    shared = _OneAtATime(progress)
    find_capacities(config, targets_from(job["targets"]),
                    CapacityOptions.model_validate(job["options"]),
                    Path(config.out_dir).parent, secrets, lambda name: shared)


class _OneAtATime:
    """A progress sink that several threads share: each event whole, one at a time."""

    def __init__(self, inner: JsonProgress) -> None:
        self.inner, self.lock = inner, threading.Lock()

    def started(self, total_requests: int, run_dir: str, model: str) -> None:
        with self.lock:
            self.inner.started(total_requests, run_dir, model)

    def level_started(self, level: LevelKey, n_requests: int) -> None:
        with self.lock:
            self.inner.level_started(level, n_requests)

    def request_done(self, record: RequestRecord) -> None:
        with self.lock:
            self.inner.request_done(record)

    def level_done(self, summary: LevelSummary) -> None:
        with self.lock:
            self.inner.level_done(summary)


def main(stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout) -> int:
    progress = JsonProgress(stdout)
    signal.signal(signal.SIGTERM, _interrupt)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    try:
        _run(json.loads(stdin.read()), progress)
    except KeyboardInterrupt:
        progress.emit({"event": "end", "run_dir": progress.run_dir, "stopped": True})
        return 130
    except UserInputError as exc:
        progress.emit({"event": "error", "message": message_of(exc), "user_error": True})
        return 2
    except (ServecapError, OSError, ValueError) as exc:
        progress.emit({"event": "error", "message": f"{type(exc).__name__}: {exc}",
                       "user_error": False})
        return 1
    progress.emit({"event": "end", "run_dir": progress.run_dir})
    return 0


if __name__ == "__main__":
    sys.exit(main())
