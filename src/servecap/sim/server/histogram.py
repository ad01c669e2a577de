"""The simulator's own TTFT and ITL, as Prometheus histograms (real seconds, like a client's).

``ServedLatency`` is fed by the engine loop once per step, not once per chunk: a step's
first tokens each give a TTFT (when they were written, minus the request's submit time: late
steps count, as a real engine's would), and its decode
chunks all share one interval since the previous step, so ITL (per token, as a client
computes it) is that interval times the chunks, over the step's decode tokens.
"""

from __future__ import annotations

from bisect import bisect_left

TTFT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0)
ITL_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 1.0, 2.5)


class Histogram:
    """Cumulative buckets plus sum and count (observations may carry a weight)."""

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last is +Inf only
        self.total = 0.0
        self.count = 0

    def observe(self, value: float, weight: int = 1) -> None:
        self.counts[bisect_left(self.bounds, value)] += weight
        self.total += value * weight
        self.count += weight

    def lines(self, name: str, labels: str) -> list[str]:
        """Exposition lines; ``labels`` is the inside of the braces, e.g. ``model_name="m"``."""
        out, running = [], 0
        for bound, n in zip((*self.bounds, float("inf")), self.counts, strict=True):
            running += n
            le = "+Inf" if bound == float("inf") else repr(bound)
            out.append(f'{name}_bucket{{{labels},le="{le}"}} {running}')
        out += [f"{name}_sum{{{labels}}} {self.total}", f"{name}_count{{{labels}}} {self.count}"]
        return out


class ServedLatency:
    """TTFT and ITL as the simulator served them."""

    def __init__(self) -> None:
        self.ttft = Histogram(TTFT_BUCKETS)
        self.itl = Histogram(ITL_BUCKETS)
        self._submitted: dict[int, float] = {}
        self._last_step: float | None = None

    def submitted(self, rid: int, now: float) -> None:
        self._submitted[rid] = now

    def forget(self, rid: int) -> None:
        self._submitted.pop(rid, None)

    def first_token(self, rid: int, at: float) -> None:
        sent = self._submitted.pop(rid, None)
        if sent is not None:
            self.ttft.observe(max(0.0, at - sent))

    def step(self, at: float, chunks: int, tokens: int) -> None:
        """A step ended at ``at`` with ``chunks`` decode chunks carrying ``tokens`` tokens."""
        if self._last_step is not None and chunks and tokens:
            interval = at - self._last_step
            self.itl.observe(interval * chunks / tokens, tokens)
        self._last_step = at
