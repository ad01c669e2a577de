"""What a loaded machine adds to a real-time measurement of the simulator.

The exact-schedule tests time `servecap sim` over real HTTP. On a busy machine the server's
process writes a first token late (its own lateness, in /metrics) and the test's event loop
reads it late (a probe's lag). A test allows its schedule's tolerance plus those two,
measured over the same requests: on a quiet machine both are near 0 and the bound is the
strict one, while a wrong schedule still fails, as neither side's lateness explains it.
"""

from __future__ import annotations

import asyncio
import time
import urllib.request
from types import TracebackType

from servecap.client.metrics_scrape import parse_exposition

PROBE_S = 0.001


def sim_metrics(base_url: str) -> dict[str, float]:
    """Every sample of the simulator's /metrics by name, its one model label dropped
    (counters end in `_total`); parsed as a run's scrapes are."""
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/metrics", timeout=10) as r:
        samples, _ = parse_exposition(r.read().decode())
    return {key.split("{", 1)[0]: value for key, value in samples.items()}


def first_token_lateness(base_url: str) -> tuple[float, float]:
    """The simulator's (summed lateness in s, count) of its first-token writes so far."""
    seen = sim_metrics(base_url)
    return (seen["sim:first_token_lateness_seconds_total"],
            seen["sim:first_token_lateness_chunks_total"])  # fmt: skip


def mean_lateness(before: tuple[float, float], after: tuple[float, float]) -> float:
    """Mean first-token lateness (s) of the writes between two `first_token_lateness`."""
    count = after[1] - before[1]
    return (after[0] - before[0]) / count if count else 0.0


class LoopLag:
    """`async with LoopLag() as lag:` how late this loop woke from 1 ms sleeps (`max_s`)."""

    def __init__(self) -> None:
        self.max_s = 0.0
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> LoopLag:
        self._task = asyncio.create_task(self._probe())
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:  # fmt: skip
        assert self._task is not None
        self._task.cancel()

    async def _probe(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(PROBE_S)
            self.max_s = max(self.max_s, time.perf_counter() - start - PROBE_S)
