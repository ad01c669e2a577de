"""How a running benchmark reports progress to a front end (CLI bar, UI page)."""

from __future__ import annotations

from typing import Protocol

from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary


class ProgressSink(Protocol):
    def started(self, total_requests: int, run_dir: str, model: str) -> None: ...

    def level_started(self, level: LevelKey, n_requests: int) -> None: ...

    def request_done(self, record: RequestRecord) -> None: ...

    def level_done(self, summary: LevelSummary) -> None: ...


class NullProgress:
    """A sink that ignores everything (library use, tests)."""

    def started(self, total_requests: int, run_dir: str, model: str) -> None:
        return None

    def level_started(self, level: LevelKey, n_requests: int) -> None:
        return None

    def request_done(self, record: RequestRecord) -> None:
        return None

    def level_done(self, summary: LevelSummary) -> None:
        return None
