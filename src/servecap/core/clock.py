"""The one clock: `perf_counter_ns` for every event, one wall-clock anchor per run."""

from __future__ import annotations

import time
from dataclasses import dataclass

now_ns = time.perf_counter_ns


@dataclass(frozen=True, slots=True)
class ClockAnchor:
    """Pairs a wall-clock instant with the monotonic counter so stored ns can be dated."""

    wall_ns: int
    perf_ns: int

    @classmethod
    def take(cls) -> ClockAnchor:
        return cls(wall_ns=time.time_ns(), perf_ns=time.perf_counter_ns())

    def to_wall_s(self, perf_ns: int) -> float:
        """The Unix time, in seconds, of a `perf_counter_ns` reading from the same process."""
        return (self.wall_ns + (perf_ns - self.perf_ns)) / 1e9
