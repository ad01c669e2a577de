"""`servecap capacity --load rate`: the highest open-loop Poisson rate within the SLOs.

MLPerf's server scenario: requests arrive as a Poisson process at a rate X whether or not
earlier ones have ended, and the answer is the highest X whose probe meets the SLOs.

`RateSearch` is the search alone (sans-I/O, like `stats.search`): from a start rate it
doubles until a probe misses (halves until one passes when the start already misses),
then bisects the bracket until its gap is within `resolution` of the passing rate.
`RateCapacitySearch` is the same search as a run plan: each probe an open-loop level with
an `OpenProbeRule`, so it stops once its verdict is decided. Rates are given on real time
and offered on the server's clock (x the simulator's time scale), as the SLOs are judged.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from servecap.api.capacity.open_probe_rule import OpenProbeRule
from servecap.api.capacity.probe_rule import ProbeOutcome, ProbeSettings
from servecap.api.run.plans import Step, Steps
from servecap.core.config import SLO, on_clock
from servecap.core.summary import LevelSummary
from servecap.kinds.open_loop import DEFAULT_OPEN_CAP, KIND, OpenLevel
from servecap.kinds.window import Window
from servecap.stats.search import SearchStatus
from servecap.stats.verdict import Verdict

MAX_RATE_PROBES = 32
# Below the start rate the search halves at most this many times (start / 64) before it
# says that nothing passes: a server that misses at 1/64 of the start needs another start.
MAX_HALVINGS = 6
DEFAULT_RESOLUTION = 0.05


@dataclass(frozen=True, slots=True)
class RateProbe:
    """One rate the search asked for and whether it met the SLOs."""

    rate: float
    passed: bool


@dataclass(frozen=True, slots=True)
class RateResult:
    """The bracket a rate search ended with: `lower` passed, `upper` missed."""

    status: SearchStatus
    lower: float | None
    upper: float | None
    probes: tuple[RateProbe, ...]


class RateSearch:
    """The highest passing rate, doubling from `start` and then bisecting (see the module)."""

    def __init__(
        self, start: float, resolution: float = DEFAULT_RESOLUTION,
        maximum: float | None = None, budget: int = MAX_RATE_PROBES,
    ) -> None:
        if not (math.isfinite(start) and start > 0):
            raise ValueError(f"start rate must be a positive number, got {start}")
        if not 0 < resolution < 1:
            raise ValueError(f"resolution must lie in (0, 1), got {resolution}")
        self.start, self.resolution, self.maximum, self.budget = start, resolution, maximum, budget
        self.minimum = start / 2**MAX_HALVINGS
        self._lower: float | None = None
        self._upper: float | None = None
        self._probes: list[RateProbe] = []
        self._pending: float | None = None

    def next_probe(self) -> float | None:
        """The next rate to measure, or None when the search is over (idempotent)."""
        if self._pending is None and len(self._probes) < self.budget:
            self._pending = self._propose()
        return self._pending

    def record(self, rate: float, passed: bool) -> None:
        """Report the pending probe's outcome."""
        if rate != self._pending:
            raise ValueError(f"rate {rate} was not the pending probe ({self._pending})")
        self._pending = None
        self._probes.append(RateProbe(rate, passed))
        if passed:
            self._lower = rate
        else:
            self._upper = rate

    def result(self) -> RateResult:
        return RateResult(self._status(), self._lower, self._upper, tuple(self._probes))

    def _status(self) -> SearchStatus:
        lower, upper = self._lower, self._upper
        if lower is None and upper is not None and upper <= self.minimum:
            return SearchStatus.NOTHING_PASSES
        if lower is None or upper is None:
            return SearchStatus.NOT_FOUND
        return SearchStatus.CONVERGED if self._tight(lower, upper) else SearchStatus.BUDGET_SPENT

    def _tight(self, lower: float, upper: float) -> bool:
        return upper - lower <= self.resolution * lower

    def _propose(self) -> float | None:
        lower, upper = self._lower, self._upper
        if lower is None and upper is None:
            return self.start
        if lower is not None and upper is not None:
            return None if self._tight(lower, upper) else _midpoint(lower, upper)
        if lower is not None:
            if self.maximum is not None and lower >= self.maximum:
                return None
            return lower * 2 if self.maximum is None else min(lower * 2, self.maximum)
        assert upper is not None
        return None if upper <= self.minimum else max(self.minimum, upper / 2)


def _midpoint(lower: float, upper: float) -> float:
    """The bracket's middle, to four significant digits (a level's key is its rate, and
    `rate=6.75/s` reads better than `rate=6.750000001/s`) but strictly inside it."""
    middle = (lower + upper) / 2
    digits = 4 - math.floor(math.log10(middle)) - 1
    rounded = round(middle, digits)
    return rounded if lower < rounded < upper else middle


@dataclass
class RateMeasured:
    """One rate probe: its offered rate (server clock), its rule's outcome, its summary."""

    rate: float
    outcome: ProbeOutcome
    summary: LevelSummary
    window: Window | None = None  # the steady window its rule kept (after the warm-up crop)


@dataclass
class RateCapacitySearch:
    """The rate search's plan; `probes` fills as the engine measures them."""

    slo: SLO
    settings: ProbeSettings
    budget_s: float
    start_rate: float  # requests/s on real time
    resolution: float = DEFAULT_RESOLUTION
    seed: int = 0
    probes: list[RateMeasured] = field(default_factory=list)
    out_of_time: bool = False
    time_scale: float = 1.0
    search: RateSearch = field(init=False)

    def __post_init__(self) -> None:
        self.search = RateSearch(self.start_rate, self.resolution)

    def use_clock(self, time_scale: float) -> None:
        """Judge and offer on the server's clock: a simulator at scale S answers S times
        faster, so it is offered S times the rate (and judged on TTFT / S, TPS x S)."""
        self.time_scale = time_scale
        self.slo = on_clock(self.slo, time_scale)

    def max_in_flight(self) -> int:
        return DEFAULT_OPEN_CAP

    def expected_requests(self) -> int:
        return self.settings.cap()

    def known_levels(self) -> None:
        return None

    def probe_level(self, rate: float, index: int) -> OpenLevel:
        """`cap` Poisson arrivals at `rate` (server clock); the rule ends it sooner. The
        window is the rule's (its warm-up crop), so the level's own is empty."""
        cap = self.settings.cap()
        return OpenLevel(
            key=KIND.key(rate), n_requests=cap, rate=rate, arrival="poisson", burstiness=1.0,
            seed=self.seed + index, duration_s=None, requests=cap,
            max_concurrency=DEFAULT_OPEN_CAP, warmup_s=0.0, cooldown_s=0.0,
        )

    def steps(self) -> Steps:
        deadline = time.monotonic() + self.budget_s
        while (rate := self.search.next_probe()) is not None:
            if time.monotonic() >= deadline:
                self.out_of_time = True
                return
            offered = rate * self.time_scale
            rule = OpenProbeRule(self.slo, self.settings)
            summary = yield Step(self.probe_level(offered, len(self.probes)), rule)
            if summary is None:
                return  # stopped: the probe recorded nothing
            outcome = rule.final()
            self.probes.append(RateMeasured(offered, outcome, summary, rule.window()))
            self.search.record(rate, outcome.verdict == Verdict.PASS.value)

    def result(self) -> RateResult:
        return self.search.result()
