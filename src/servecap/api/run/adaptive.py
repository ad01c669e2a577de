"""Plans that decide each level from the ones measured before it (verify's search,
`run --find-cmax`): a progress sink that keeps every finished level's summary.

The sweep summarises a level and hands it to the progress sink before it asks the plan for
the next level, so a plan holding this sink reads the last level's summary when it resumes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from servecap.api.run.progress import ProgressSink
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary


@dataclass
class SummaryCapture:
    """A progress sink that keeps each level's summary for an adaptive plan, and forwards."""

    inner: ProgressSink
    summaries: list[LevelSummary] = field(default_factory=list)

    def started(self, total_requests: int, run_dir: str, model: str) -> None:
        self.inner.started(total_requests, run_dir, model)

    def level_started(self, level: LevelKey, n_requests: int) -> None:
        self.inner.level_started(level, n_requests)

    def request_done(self, record: RequestRecord) -> None:
        self.inner.request_done(record)

    def level_done(self, summary: LevelSummary) -> None:
        self.summaries.append(summary)
        self.inner.level_done(summary)
