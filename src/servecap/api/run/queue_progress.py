"""Progress from a sweep in a child process: a sink that forwards every event to a queue.

The demo sweeps its deployments side by side, each in a process of its own (a client that
shares an interpreter with other work stamps late); the parent reads the queue and calls its
own sinks, so one live display shows them all.
"""

from __future__ import annotations

from typing import Any

from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary


class QueueProgress:
    """A progress sink in a child process: forwards every event to the parent."""

    def __init__(self, events: Any, tag: str = "") -> None:
        self.events, self.tag = events, tag

    def started(self, total_requests: int, run_dir: str, model: str) -> None:
        self.events.put((self.tag, "started", (total_requests, run_dir, model)))

    def level_started(self, level: LevelKey, n_requests: int) -> None:
        self.events.put((self.tag, "level_started", (level, n_requests)))

    def request_done(self, record: RequestRecord) -> None:
        self.events.put((self.tag, "request_done", (record,)))

    def level_done(self, summary: LevelSummary) -> None:
        self.events.put((self.tag, "level_done", (summary,)))
