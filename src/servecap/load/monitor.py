"""The load generator watches itself: event-loop lag and CPU during a level.

A level is only valid if the client kept up. Lag is how late a short periodic timer fires;
when it is high, queueing inside the client would be counted as server latency.
"""

from __future__ import annotations

import asyncio
import time
from types import TracebackType
from typing import Any

import numpy as np

from servecap.core.records import ClientHealth

TICK_S = 0.005
LAG_BOUND_MS = 10.0  # p99 lag above this: the client was the bottleneck
CPU_BOUND_PCT = 95.0  # of one core


class ClientMonitor:
    """Async context manager that samples loop lag and process CPU while a level runs.

    A per-level observer (`load.sweep.LevelObserver`): its fields are the summary's
    `loop_lag_p99_ms`, `client_cpu_pct` and `client_bound`."""

    def __init__(self) -> None:
        self._lags_ms: list[float] = []
        self._task: asyncio.Task[None] | None = None
        self._cpu0 = 0.0
        self._wall0 = 0.0
        self.health: ClientHealth | None = None

    async def __aenter__(self) -> ClientMonitor:
        self._cpu0, self._wall0 = time.process_time(), time.perf_counter()
        self._task = asyncio.create_task(self._sample())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        wall = max(time.perf_counter() - self._wall0, 1e-9)
        cpu_pct = 100.0 * (time.process_time() - self._cpu0) / wall
        lag = float(np.percentile(self._lags_ms, 99)) if self._lags_ms else 0.0
        self.health = ClientHealth(
            loop_lag_p99_ms=lag,
            client_cpu_pct=cpu_pct,
            client_bound=lag > LAG_BOUND_MS or cpu_pct > CPU_BOUND_PCT,
        )

    async def _sample(self) -> None:
        # perf_counter, not loop.time(): uvloop's loop time is libuv's millisecond clock,
        # cached at the start of each loop iteration, so it cannot see a callback that runs
        # late within the iteration, which is where a busy client delays its stamps
        while True:
            due = time.perf_counter() + TICK_S
            await asyncio.sleep(TICK_S)
            self._lags_ms.append(max(0.0, time.perf_counter() - due) * 1000.0)

    def fields(self) -> dict[str, Any]:
        """The level's client-health columns (none if the level never ran)."""
        if self.health is None:
            return {}
        return {
            "loop_lag_p99_ms": self.health.loop_lag_p99_ms,
            "client_cpu_pct": self.health.client_cpu_pct,
            "client_bound": self.health.client_bound,
        }
