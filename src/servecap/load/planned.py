"""A worker's share of a level with target times: send request i at `t0 + offset_i`.

The parent's one scheduler decides every target of an open-loop, fixed or replay level
(`load.shares`) and deals them out; a worker sends its own at the absolute times it was
given, from the start time all workers share (`start_ns`), so the schedule across workers
is the one a single process would keep. Each record keeps the level's key, its index in
the whole level and its target as `scheduled_at`. An open loop's cap on requests in flight
is split over the workers (`cap`), an arrival finding its worker's part full waits and
records `admitted_at`, as in one process.
"""

from __future__ import annotations

from dataclasses import dataclass

from servecap.core.load_spec import LevelSpec
from servecap.load.on_time import send_at_targets
from servecap.load.scheduler import LevelIO


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedLevel(LevelSpec):
    """Part of a level: `(index, offset_ns)` pairs; `replay` asks the source for row index."""

    targets: tuple[tuple[int, int], ...]
    cap: int | None = None
    replay: bool = False
    start_ns: int | None = None  # the start all workers share (this process's clock)


async def run_planned_level(level: PlannedLevel, io: LevelIO) -> None:
    """Send each of `level.targets` at its offset from the start; at most `cap` in flight."""
    request_at = getattr(io.source, "request", None) if level.replay else None
    if level.replay and request_at is None:
        raise TypeError("a replay share needs a trace source (one with request(i))")
    # a replay share sends its own rows; any other source its next request
    timed = (
        (index, offset, request_at(index) if request_at is not None else io.source.next_request())
        for index, offset in level.targets
    )
    await send_at_targets(level, io, timed, cap=level.cap, start_ns=level.start_ns)
