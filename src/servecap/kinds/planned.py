"""A worker's share of a level with target times: send request i at `t0 + offset_i`.

The parent's one scheduler decides every target of a level with target times (open loop,
fixed schedule, replay, a rate shape) and deals them out (`deal_targets`); a worker sends
its own at the absolute times it was given, from the start time all workers share
(`start_ns`), so the schedule across workers is the one a single process would keep. Each
record keeps the level's key, its index in the whole level and its target as `scheduled_at`.
An open loop's cap on requests in flight is split over the workers (`cap`), an arrival
finding its worker's part full waits and records `admitted_at`, as in one process.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from servecap.kinds.base import LevelSpec, Share
from servecap.kinds.io import LevelIO
from servecap.kinds.on_time import send_at_targets

Targets = list[tuple[int, int]]  # (row index in the level, offset ns from its start)


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedLevel(LevelSpec):
    """Part of a level: `(index, offset_ns)` pairs; `replay` asks the source for row index."""

    targets: tuple[tuple[int, int], ...]
    cap: int | None = None
    replay: bool = False
    start_ns: int | None = None  # the start all workers share (this process's clock)

    WIRE = "planned"

    def starting_at(self, start_ns: int) -> PlannedLevel:
        """The share with its targets counted from the start every worker shares, exactly."""
        return replace(self, start_ns=start_ns)

    async def run(self, io: LevelIO) -> None:
        """Send each of `targets` at its offset from the start; at most `cap` in flight."""
        request_at = getattr(io.source, "request", None) if self.replay else None
        if self.replay and request_at is None:
            raise TypeError("a replay share needs a trace source (one with request(i))")
        # a replay share sends its own rows; any other source its next request
        timed = (
            (index, offset,
             request_at(index) if request_at is not None else io.source.next_request())
            for index, offset in self.targets
        )  # fmt: skip
        await send_at_targets(self, io, timed, cap=self.cap, start_ns=self.start_ns)


def deal_targets(
    level: LevelSpec, targets: Targets, workers: int, cap: int | None = None,
    replay: bool = False,
) -> list[Share]:  # fmt: skip
    """The level's targets dealt round-robin over `workers` (each a `PlannedLevel`), so the
    schedule across workers is exact; an in-flight cap is split too."""
    shares = []
    for k in range(min(workers, len(targets))):
        mine = tuple(targets[k::workers])
        part_cap = None if cap is None else max(1, math.ceil(cap / workers))
        planned = PlannedLevel(
            key=level.key, n_requests=len(mine), warmup=level.warmup, targets=mine,
            cap=part_cap, replay=replay,
        )
        shares.append(Share(k, planned))
    return shares
