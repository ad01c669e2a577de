"""Open-loop arrival schedules: absolute target send times for a rate, sans-I/O.

Contract:
- An `ArrivalProcess` is a process name, a rate (requests/s, > 0) and, for `gamma`, a
  burstiness K (the gamma shape, > 0; K = 1 is Poisson, K < 1 burstier, K > 1 smoother).
  Gaps have mean 1/rate for every process; their coefficient of variation (CV) is 0 for
  `constant`, 1 for `poisson` and 1/sqrt(K) for `gamma`.
- `offsets()` returns absolute target times `t0 + cumsum(gaps)` (float64 seconds, strictly
  non-decreasing): the first request is due one gap after `t0`, as in vLLM's `bench serve`.
  A scheduler sleeps until each target (never a relative sleep after a send), so its lateness
  `sent_at - target` is measurable and does not accumulate.
- Either `count` requests, or every arrival with target < `t0 + duration`.
- Seeded: the same process, seed and bounds give the same array on every machine (numpy's
  PCG64 `Generator`); a prefix of a longer schedule equals the shorter one for the same seed.
- Bad parameters raise `UserInputError` naming the flag; nothing here does I/O or sleeps.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from servecap.core.errors import SettingError, bad_setting

ProcessName = Literal["poisson", "constant", "gamma"]
PROCESSES: tuple[str, ...] = ("poisson", "constant", "gamma")

# Gaps are drawn in chunks so a duration-bounded schedule needs no guess of its length.
_CHUNK = 4096
# A hard cap so a typo (rate 1e9 for an hour) fails clearly instead of exhausting memory.
MAX_ARRIVALS = 50_000_000


@dataclass(frozen=True, slots=True)
class ArrivalProcess:
    """How requests arrive: `process` at `rate` requests/s (`burstiness` is gamma's shape)."""

    process: ProcessName
    rate: float
    burstiness: float = 1.0

    def __post_init__(self) -> None:
        if self.process not in PROCESSES:
            raise bad_setting("arrival",
                              f"{self.process!r}: expected one of {', '.join(PROCESSES)}")
        if not (math.isfinite(self.rate) and self.rate > 0):
            raise bad_setting("rate", f"{self.rate!r}: a rate must be a number > 0 requests/s")
        if not (math.isfinite(self.burstiness) and self.burstiness > 0):
            raise bad_setting("burstiness",
                              f"{self.burstiness!r}: the gamma shape must be a number > 0")

    @property
    def mean_gap(self) -> float:
        """The expected gap between arrivals, seconds."""
        return 1.0 / self.rate

    @property
    def gap_cv(self) -> float:
        """The coefficient of variation of the gaps this process draws."""
        if self.process == "constant":
            return 0.0
        if self.process == "poisson":
            return 1.0
        return 1.0 / math.sqrt(self.burstiness)

    def gaps(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """`n` gaps (seconds) drawn from `rng`."""
        if self.process == "constant":
            return np.full(n, self.mean_gap)
        if self.process == "poisson":
            return rng.exponential(self.mean_gap, n)
        # Gamma with shape K and scale 1/(rate*K) keeps the mean gap at 1/rate.
        return rng.gamma(self.burstiness, self.mean_gap / self.burstiness, n)

    def offsets(
        self,
        *,
        seed: int,
        t0: float = 0.0,
        count: int | None = None,
        duration: float | None = None,
    ) -> np.ndarray:
        """Absolute target send times for `count` requests or for `duration` seconds."""
        if (count is None) == (duration is None):
            raise SettingError("give exactly one of {requests} and {duration}", "requests",
                               "duration")
        rng = np.random.default_rng(seed)
        if count is not None:
            if count < 0 or count > MAX_ARRIVALS:
                raise bad_setting("requests", f"{count}: expected 0..{MAX_ARRIVALS}")
            return t0 + self._cumulative(rng, lambda times, total: total >= count)[:count]
        assert duration is not None
        if not (math.isfinite(duration) and duration > 0):
            raise bad_setting("duration", f"{duration!r}: expected a number of seconds > 0")
        if duration * self.rate > MAX_ARRIVALS:
            raise SettingError(f"{{rate}} {self.rate} for {{duration}} {duration} s is over "
                               f"{MAX_ARRIVALS} requests", "rate", "duration")
        times = self._cumulative(rng, lambda times, total: times[-1] >= duration)
        return t0 + times[times < duration]

    def _cumulative(
        self, rng: np.random.Generator, done: Callable[[np.ndarray, int], bool]
    ) -> np.ndarray:
        """Cumulative gaps drawn chunk by chunk until `done(last_chunk, total_drawn)`.

        Both bounds draw the same chunks in the same order, so a `count` schedule and a
        `duration` schedule of one seed agree on every arrival they share.
        """
        parts: list[np.ndarray] = []
        last, total = 0.0, 0
        while True:
            times = last + np.cumsum(self.gaps(_CHUNK, rng))
            parts.append(times)
            total += _CHUNK
            if done(times, total):
                return np.concatenate(parts)
            last = float(times[-1])
