"""The capacity search as a run plan: double c from 1 until a probe misses, then bisect.

Each probe is a closed level of c streams with a `ProbeRule`, so it stops once its verdict
is decided; the engine hands the plan each probe's summary, and the plan reads the probe's
verdict off its rule. A probe that is undecided or has no steady state counts as a miss
(`stats.search`: a verified count rests only on passes). The search ends when the last pass
and the first miss are adjacent, when the time budget is spent (checked before each probe:
a probe that has started finishes), or when the levels run out at `max_concurrency`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from servecap.api.capacity.probe_rule import ProbeOutcome, ProbeRule, ProbeSettings
from servecap.api.run.plans import Step, Steps
from servecap.core.config import SLO, on_clock
from servecap.core.level_key import LevelKey
from servecap.core.summary import LevelSummary
from servecap.kinds.base import LevelSpec
from servecap.kinds.closed import ClosedLevel
from servecap.stats.search import BoundarySearch, SearchResult
from servecap.stats.verdict import Verdict

MAX_PROBES = 32




@dataclass
class MeasuredProbe:
    """One probe's concurrency, what its rule decided, and its level's summary."""

    concurrency: int
    outcome: ProbeOutcome
    summary: LevelSummary


@dataclass
class CapacitySearch:
    """The search's plan; `probes` fills as the engine measures them."""

    slo: SLO
    settings: ProbeSettings
    budget_s: float
    max_concurrency: int = 1024
    probes: list[MeasuredProbe] = field(default_factory=list)
    out_of_time: bool = False
    time_scale: float = 1.0
    search: BoundarySearch = field(init=False)

    def __post_init__(self) -> None:
        self.search = BoundarySearch(start=1, budget=MAX_PROBES, minimum=1,
                                     maximum=self.max_concurrency)

    def use_clock(self, time_scale: float) -> None:
        """Judge on the server's clock: a simulator at time scale S answers S times faster,
        so its SLOs are TTFT / S and TPS x S (and the users think Z / S)."""
        self.time_scale = time_scale
        self.slo = on_clock(self.slo, time_scale)

    def max_in_flight(self) -> int:
        return self.max_concurrency

    def expected_requests(self) -> int:
        return self.settings.cap()  # at least one probe; the rest are decided as it goes

    def known_levels(self) -> None:
        return None

    def probe_level(self, concurrency: int) -> LevelSpec:
        cap = max(self.settings.cap(), concurrency)
        return ClosedLevel(key=LevelKey.closed(concurrency), n_requests=cap,
                           concurrency=concurrency)

    def steps(self) -> Steps:
        deadline = time.monotonic() + self.budget_s
        while (concurrency := self.search.next_probe()) is not None:
            if time.monotonic() >= deadline:
                self.out_of_time = True
                return
            rule = ProbeRule(self.slo, concurrency, self.settings)
            summary = yield Step(self.probe_level(concurrency), rule)
            if summary is None:
                return  # stopped: the probe recorded nothing
            self.probes.append(MeasuredProbe(concurrency, rule.outcome, summary))
            self.search.record(concurrency, rule.outcome.verdict == Verdict.PASS.value)

    def result(self) -> SearchResult:
        return self.search.result()
