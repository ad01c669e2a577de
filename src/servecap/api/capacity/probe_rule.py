"""One capacity probe's stopping rule: stop sending once the level's verdict is decided.

A probe is a closed level of c streams. The rule looks at the *complete prefix* of the level:
the requests sent before every stream's request in flight, so a look never sees only the
fast finishers (a stream sends its next request when its last ends, so stream k's request
in flight was sent at the end of its last ended one: everything sent before the earliest
such time has ended). At each look it crops the warm-up (MSER-5 on TTFT in send order),
refuses a series that still drifts, and judges every SLO (`stats.early_verdict`).

Error budget: a pass is claimed only at the `PASS_LOOKS` looks (`ProbeSettings.pass_looks`:
the first look, the first size at which even MSER-5's largest crop leaves the draws a pass
needs, and the cap), a fail at any of the level's looks (every `fail_step` complete
requests from 30, and from two first rounds, on: fewer cannot tell a slow start from the
level); each side spreads `1 - confidence` over its looks and the two SLOs (Bonferroni),
so on independent draws a level's verdict is wrong with probability at most
`1 - confidence`. A failed request fails the level at once, as `plan` judges a level with
errors. At the sample cap the level reads what the last look said: undecided (counted as a
miss) or no steady state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from servecap.core.config import SLO
from servecap.core.records import RequestRecord
from servecap.core.request_metrics import request_metrics
from servecap.kinds.window import NS_PER_S, Window
from servecap.stats.early_verdict import MIN_MEAN_N, Judged, Threshold, combine, judge
from servecap.stats.percentiles import tail_quantile
from servecap.stats.steady_state import BATCH, MIN_DRIFT_N, drifts, mser_crop
from servecap.stats.verdict import Verdict

PASS_LOOKS = 3
MIN_FAIL_N = 30
NO_STEADY_STATE = "no steady state"


@dataclass(frozen=True)
class ProbeSettings:
    """How sure a probe must be, and how much it may spend."""

    confidence: float = 0.95
    first_look: int = 60  # complete requests at the first pass look; doubles after

    def cap(self) -> int:
        """The most requests a probe judges: the last pass look."""
        return self.first_look * 4

    def pass_looks(self, statistic: str) -> list[int]:
        """The complete-request counts at which a pass may be claimed: the first look; the
        smallest count whose kept draws, after the largest crop MSER-5 may take (half, in
        whole batches), still hold the draws a pass on `statistic` needs (so a probe that a
        large crop kept from passing at the first look is not made to wait for the cap;
        twice the first where the first already holds them); and the cap."""
        need = min_pass_draws(statistic, self.pass_alpha())
        second = next((n for n in range(self.first_look, self.cap())
                       if n - BATCH * (n // BATCH // 2) >= need), self.cap())
        if second == self.first_look:
            second = 2 * self.first_look
        return sorted({self.first_look, second, self.cap()})

    def pass_alpha(self) -> float:
        """Each pass look's share of the error budget, per SLO (see the module)."""
        return (1.0 - self.confidence) / (2 * PASS_LOOKS)


def min_pass_draws(statistic: str, alpha: float) -> int:
    """The fewest draws on which a pass on `statistic` can be claimed at `alpha`: a mean's
    interval needs `MIN_MEAN_N`; a percentile's bad-side bound needs every draw within the
    limit to be a bound at all, so n with q^n <= alpha (46 for P90 at 0.05 / 6)."""
    if statistic == "mean":
        return MIN_MEAN_N
    q = tail_quantile(statistic, False) / 100.0
    return math.ceil(math.log(alpha) / math.log(q))


@dataclass
class ProbeOutcome:
    """What a probe decided, and on what."""

    verdict: str  # pass, fail, undecided or "no steady state"
    n_judged: int = 0
    cropped: int = 0
    judged: list[Judged] = field(default_factory=list)
    reason: str = ""

    def binding(self) -> str | None:
        """Which SLO a miss broke (or was not sure of), or why it could not be judged."""
        if self.reason:
            return self.reason
        names = [j.threshold.metric.upper() for j in self.judged if j.verdict.value != "pass"]
        return " and ".join(names) or None


@dataclass
class _Sample:
    ttft_ms: list[float]
    tps: list[float]
    first_ns: int
    kept_from_ns: int


class ProbeRule:
    """A `StopRule` for one closed probe of `streams` streams (see the module)."""

    def __init__(self, slo: SLO, streams: int, settings: ProbeSettings) -> None:
        self.slo, self.streams, self.settings = slo, streams, settings
        self.records: list[RequestRecord] = []
        self.outcome = ProbeOutcome(Verdict.UNDECIDED.value)
        self._last_end: dict[int, int] = {}
        self._next_pass = 0
        self._fail_step = max(streams, 10)
        # before MIN_FAIL_N, MSER-5 cannot tell a slow start from the level itself; and a
        # closed level's first round (c requests sent at once, which a serial stage queues)
        # is a slow start that MSER-5 crops only while it is at most half the series, in
        # whole batches: so no fail look before the prefix holds two rounds
        first_round = -(-streams // BATCH) * BATCH
        self._next_fail = max(MIN_FAIL_N, 2 * first_round)
        self._window: Window | None = None
        fail_looks = max(1, settings.cap() // self._fail_step)
        self._pass_looks = settings.pass_looks(slo.statistic)
        self._alpha_pass = settings.pass_alpha()
        self._alpha_fail = (1.0 - settings.confidence) / (2 * fail_looks)
        self.decided = False

    def seen(self, record: RequestRecord) -> bool:
        if self.decided:
            return True
        self.records.append(record)
        if record.ended_at is not None:
            self._last_end[record.stream_index] = record.ended_at
        if record.status == "failed":
            self._decide(ProbeOutcome(Verdict.FAIL.value, reason="failed requests"))
            return True
        self._look()
        return self.decided

    def window(self) -> Window | None:
        return self._window

    def _complete(self) -> list[RequestRecord]:
        """The requests sent before the earliest send still in flight, in send order."""
        ordered = sorted(self.records, key=lambda r: r.scheduled_at)
        if len(self.records) >= self.settings.cap():
            return ordered[: self.settings.cap()]
        if len(self._last_end) < self.streams:
            return []  # a stream still on its first request: nothing is complete yet
        cutoff = min(self._last_end.values())
        return [r for r in ordered if r.scheduled_at < cutoff]

    def _look(self) -> None:
        complete = self._complete()
        n = len(complete)
        looks = self._pass_looks
        at_pass = self._next_pass < len(looks) and n >= looks[self._next_pass]
        at_fail = n >= self._next_fail
        if not (at_pass or at_fail):
            return
        if at_fail:
            self._next_fail = (n // self._fail_step + 1) * self._fail_step
        if at_pass:
            self._next_pass += 1
        last = n >= self.settings.cap()
        self._judge(complete, at_pass, last)

    def _judge(self, complete: list[RequestRecord], at_pass: bool, last: bool) -> None:
        sample, cropped = _sample(complete)
        # fewer kept draws cannot tell a steady level from a drifting one: no verdict yet
        known = len(sample.ttft_ms) >= MIN_DRIFT_N
        steady = known and not drifts(sample.ttft_ms)
        alpha = self._alpha_pass if at_pass else self._alpha_fail
        judged = [judge(values, threshold, alpha) for threshold, values in self._metrics(sample)]
        verdict = combine(judged)
        self._window = Window(warmup_s=(sample.kept_from_ns - sample.first_ns) / NS_PER_S)
        outcome = ProbeOutcome(verdict.value, len(sample.ttft_ms), cropped, judged)
        if known and not steady:
            outcome.verdict = NO_STEADY_STATE
            outcome.reason = "TTFT still shifts after the warm-up crop"
        self.outcome = outcome
        decided = steady and (verdict is Verdict.FAIL or (at_pass and verdict is Verdict.PASS))
        if decided or last:
            self._decide(outcome)

    def _metrics(self, sample: _Sample) -> list[tuple[Threshold, list[float]]]:
        stat = self.slo.statistic
        return [
            (Threshold("ttft", stat, self.slo.ttft_ms, False), sample.ttft_ms),
            (Threshold("tps", stat, self.slo.tps, True), sample.tps),
        ]

    def _decide(self, outcome: ProbeOutcome) -> None:
        self.outcome, self.decided = outcome, True


def _sample(complete: list[RequestRecord]) -> tuple[_Sample, int]:
    """TTFT and TPS of the complete prefix after MSER-5's warm-up crop, and the crop."""
    measured = [(r, m) for r in complete if (m := request_metrics(r)) is not None]
    ttft = [m.ttft_ns / 1e6 for _, m in measured]
    cropped = mser_crop(ttft)
    first = complete[0].scheduled_at if complete else 0
    kept_from = measured[cropped][0].scheduled_at if cropped < len(measured) else first
    tps = [m.tps or 0.0 for _, m in measured[cropped:]]
    return _Sample(ttft[cropped:], tps, first, kept_from), cropped
