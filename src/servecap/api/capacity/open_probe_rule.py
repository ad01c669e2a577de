"""One open-loop rate probe's stopping rule: the closed probe's rule, read on arrivals.

The verdict is the concurrency probe's (`probe_rule.ProbeRule`: MSER-5 crop, drift gate,
order-statistic bounds at the same looks and confidence); what differs is what a sample
is, and one more way to miss:

- **The complete prefix** is the arrivals 0..k-1 that have all ended (a record's
  `stream_index` is its arrival's index in an open level), so a look never sees only the
  fast finishers.
- **TTFT is measured from the arrival's target time** (`scheduled_at`), what a user
  arriving then waits, queueing in the client included (no coordinated omission), as
  goodput counts it (`metrics.goodput`).
- **Off schedule is a miss.** An open loop that cannot keep its schedule measures a queue,
  not a rate: when arrivals wait for the cap on requests in flight (the server holds that
  many and takes no more), when the client itself sends late (one arrival in ten or more
  sent over `metrics.schedule.CLIENT_LATE_P99_MS` after its target), or when TTFT rises
  through the probe after the warm-up crop (arrivals outpace completions: the queue
  grows), the probe reads `off schedule` with its reason, and counts as a miss. Lateness
  is judged at its p90, not the level flag's p99: over the 30 to 240 arrivals of a probe a
  p99 is its one or two latest sends, and a single hiccup of a busy machine is not a
  client falling behind.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from servecap.api.capacity.probe_rule import (
    MIN_FAIL_N,
    NO_STEADY_STATE,
    ProbeOutcome,
    ProbeRule,
    ProbeSettings,
)
from servecap.core.config import SLO
from servecap.core.records import RequestRecord
from servecap.metrics.schedule import CLIENT_LATE_P99_MS, client_lateness_ns
from servecap.stats.verdict import Verdict

OFF_SCHEDULE = "off schedule"
NS_PER_MS = 1e6
# A fail look every this many complete arrivals (a closed probe's is max(c, 10)).
FAIL_STEP = 10
LATE_QUANTILE = 90.0  # the client's send lateness is judged at this percentile (see above)


class OpenProbeRule(ProbeRule):
    """A `StopRule` for one open-loop probe (see the module)."""

    def __init__(self, slo: SLO, settings: ProbeSettings) -> None:
        super().__init__(slo, FAIL_STEP, settings)
        self._sent: dict[int, RequestRecord] = {}  # as sent, for the schedule checks
        self._by_index: dict[int, RequestRecord] = {}  # as judged, from the arrival
        self._prefix = 0  # arrivals 0.._prefix-1 have all ended

    def seen(self, record: RequestRecord) -> bool:
        # kept after the decision too: the arrivals in flight then still show the schedule
        self._sent[record.stream_index] = record
        if self.decided:
            return True
        self._by_index[record.stream_index] = _from_arrival(record)
        while self._prefix in self._by_index:
            self._prefix += 1
        return super().seen(self._by_index[record.stream_index])

    def _complete(self) -> list[RequestRecord]:
        """Arrivals 0..k-1, all ended, in arrival order (at most the sample cap)."""
        k = min(self._prefix, self.settings.cap())
        return [self._by_index[i] for i in range(k)]

    def _judge(self, complete: list[RequestRecord], at_pass: bool, last: bool) -> None:
        sent = [self._sent[r.stream_index] for r in complete]
        behind = _off_schedule(sent) if len(sent) >= MIN_FAIL_N else None
        if behind is not None:
            self._decide(ProbeOutcome(OFF_SCHEDULE, len(complete), reason=behind))
            return
        super()._judge(complete, at_pass, last)
        if self.outcome.verdict == NO_STEADY_STATE and _rises(complete, self.outcome.cropped):
            # under an open loop a rising TTFT is the queue: arrivals outpace the server,
            # and more arrivals only lengthen it, so the probe ends here (a closed probe's
            # drift may yet be a warm-up a later crop removes: it waits for its cap)
            self.outcome.verdict = OFF_SCHEDULE
            self.outcome.reason = "queue growing: TTFT rises through the probe"
            self._decide(self.outcome)

    def final(self) -> ProbeOutcome:
        """The probe's outcome with what only the whole level shows: a pass whose later
        arrivals (sent after the judged prefix, before the rule stopped it) fell behind
        the schedule is off schedule too."""
        behind = _off_schedule(list(self._sent.values()))
        if behind is not None and self.outcome.verdict == Verdict.PASS.value:
            self.outcome.verdict, self.outcome.reason = OFF_SCHEDULE, behind
        return self.outcome


def _from_arrival(record: RequestRecord) -> RequestRecord:
    """The record as the rule judges it: sent at its target time, so `request_metrics`'
    TTFT (first token - sent) is the user's wait from arrival. TPS is the server's own
    (tokens over the request's time from its send), so the copy keeps that as it was."""
    if record.sent_at is None or record.sent_at == record.scheduled_at:
        return record
    shift = record.sent_at - record.scheduled_at
    # the end moves with the send, so the request's latency, hence its TPS, is unchanged
    ended = record.ended_at - shift if record.ended_at is not None else None
    return replace(record, sent_at=record.scheduled_at, ended_at=ended)


def _off_schedule(complete: list[RequestRecord]) -> str | None:
    """Why the probe did not keep its schedule, or None when it did."""
    waited = sum(1 for r in complete if r.admitted_at is not None)
    if waited:
        return (f"queue growing: {waited} of {len(complete)} arrivals waited for the cap "
                "on requests in flight")
    own = [v for r in complete if (v := client_lateness_ns(r)) is not None]
    if own:
        late = float(np.percentile(np.asarray(own) / NS_PER_MS, LATE_QUANTILE))
        if late > CLIENT_LATE_P99_MS:
            return (f"client behind schedule: its sends lagged (p{LATE_QUANTILE:g} "
                    f"{late:.1f} ms after due)")
    return None


def _rises(complete: list[RequestRecord], cropped: int) -> bool:
    """Whether the kept TTFTs' second half sits above their first (a falling series is a
    slow start the crop missed, not a queue)."""
    ttft = [(r.first_token_at - r.scheduled_at) for r in complete
            if r.ok and r.first_token_at is not None][cropped:]
    half = len(ttft) // 2
    return half > 0 and float(np.median(ttft[half:])) > float(np.median(ttft[:half]))
