"""A server gone for good mid-run: the run stops after a stated time with no success.

Without this, a closed loop against a dead server spends every remaining level in a few
milliseconds of `connect_refused` rows and ends "complete". The watch sees every ended
record (in the run's sink, so worker processes' records too): once failures alone have
ended for `window_s` seconds (no request succeeded since the first of them), it sets the
run's stop event, and the run ends incomplete with the reasons counted, keeping every row.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from servecap.core.clock import now_ns
from servecap.core.records import RequestRecord

DEFAULT_OUTAGE_S = 60.0


class OutageWatch:
    """Declares an outage after `window_s` seconds of failures without one success."""

    def __init__(self, window_s: float, stop: asyncio.Event) -> None:
        self.window_ns = int(window_s * 1e9)
        self.window_s = window_s
        self.stop = stop
        self.declared = False
        self._since: int | None = None
        self._reasons: Counter[str] = Counter()

    def observe(self, record: RequestRecord) -> None:
        if record.status == "ok":
            self._since = None
            self._reasons.clear()
            return
        if record.status != "failed" or self.declared:
            return  # a cancelled request says nothing about the server
        now = now_ns()
        self._since = now if self._since is None else self._since
        self._reasons[record.reason or "failed"] += 1
        if now - self._since >= self.window_ns:
            self.declared = True
            self.stop.set()

    def reason(self) -> str:
        counts = ", ".join(f"{reason} x{n}" for reason, n in self._reasons.most_common(3))
        return (f"server gone: no request succeeded for {self.window_s:g} s ({counts}); "
                "stopped (--outage-s)")
