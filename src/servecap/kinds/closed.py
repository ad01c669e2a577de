"""Closed loop: c streams, each sends its next request when its last one ends.

This is the seed's model of c active users. Each request is scheduled at the moment its
stream becomes free, so `scheduled_at` and `sent_at` differ only by client overhead. Over
worker processes the c streams are dealt out (c / N each, the first c mod N workers one
more) with the level's requests in proportion; a worker's stream indices are shifted back
to the level's own (`Share.stream_offset`). The top level within the SLOs is C_max, and
the users it serves follow Little's law.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import Field

from servecap.core.clock import now_ns
from servecap.core.config import parse_levels
from servecap.core.level_key import CONCURRENCY_PREFIX, LevelKey
from servecap.core.records import RequestRecord
from servecap.kinds.base import KindText, LevelSpec, LoadKind, LoadPlan, Share
from servecap.kinds.io import LevelIO, in_task_group
from servecap.stats.capacity import users_by_littles_law
from servecap.workload.source import RequestSource


@dataclass(frozen=True, slots=True, kw_only=True)
class ClosedLevel(LevelSpec):
    concurrency: int

    WIRE = "ClosedLevel"

    def demand(self) -> int:
        return self.concurrency

    def split(self, workers: int, source: RequestSource | None = None) -> list[Share]:
        streams = [len(range(k, self.concurrency, workers)) for k in range(workers)]
        shares, offset, given = [], 0, 0
        for k, c_k in enumerate(streams):
            if c_k == 0:
                continue
            # requests in proportion to streams; the last worker takes the rounding
            n_k = round(self.n_requests * (offset + c_k) / self.concurrency) - given
            if n_k > 0:
                part = replace(self, concurrency=c_k, n_requests=n_k)
                shares.append(Share(k, part, stream_offset=offset))
            offset += c_k
            given += n_k
        return shares

    async def run(self, io: LevelIO) -> None:
        """Send `n_requests` over `concurrency` streams; each ended request is sunk."""
        remaining = itertools.count()

        async def stream(index: int) -> None:
            while next(remaining) < self.n_requests and not io.stopped:
                record = RequestRecord.for_level(
                    self.key, next(io.ids), index, now_ns(), warmup=self.warmup
                )
                await io.send(record)

        async def start(group: asyncio.TaskGroup) -> None:
            for index in range(min(self.concurrency, self.n_requests)):
                group.create_task(stream(index))

        await in_task_group(start)


def warmup_level(n_requests: int) -> ClosedLevel:
    """Warm-up is one stream whatever the kind; its rows are marked and never form a level."""
    return ClosedLevel(key=LevelKey.closed(1), n_requests=n_requests, warmup=True, concurrency=1)


class ClosedLoad(LoadPlan):
    """Levels of concurrency: at c, c streams send `rounds x c` requests back to back."""


    kind: Literal["closed"] = "closed"
    concurrency: list[int] = Field(min_length=1)
    rounds: int = Field(default=10, ge=1)

    def levels(self) -> list[ClosedLevel]:
        return [
            ClosedLevel(key=LevelKey.closed(c), n_requests=c * self.rounds, concurrency=c)
            for c in sorted(set(self.concurrency))
        ]

    def max_in_flight(self) -> int:
        return max(self.concurrency)

    @classmethod
    def from_text(cls, spec: str, seed: int) -> ClosedLoad:
        return cls(concurrency=parse_levels(spec, "load"))

    def probe(self, value: int) -> ClosedLevel:
        return ClosedLevel(
            key=LevelKey.closed(value), n_requests=value * self.rounds, concurrency=value
        )


class ClosedKind(LoadKind):
    def scheduled(self) -> bool:
        return False

    def streams(self, key: LevelKey) -> int:
        return int(key.value)

    def users_at(self, key: LevelKey, latency_mean_s: float, think_time_s: float) -> int:
        """Each user holds a stream for L and thinks for T: N = C_max * (1 + T / L)."""
        return users_by_littles_law(int(key.value), latency_mean_s, think_time_s)

    def capacity_fields(self, key: LevelKey) -> dict[str, Any]:
        return {"c_max": int(key.value)}


KIND = ClosedKind(
    "closed",
    KindText(
        prefix=CONCURRENCY_PREFIX,
        unit="",
        quantity="concurrency",
        axis_title="concurrency (c)",
        mode="closed loop",
        methodology=(
            "closed loop: c streams, each sends its next request when its last one ends "
            "(the seed's model of c active users)"
        ),
        bare_values=True,
        example="c=1,2,4,8",
    ),
    ClosedLoad,
    [ClosedLevel],
)
