"""How a level is split over worker processes (sans-I/O: levels in, shares out).

- Closed loop: the c streams are dealt out (c / N each, the first c mod N workers one
  more) with the level's requests in proportion; a worker's stream indices are shifted
  back to the level's own (`stream_offset`).
- Open loop, fixed schedule, trace replay: the parent computes every target time once
  (the same function one process uses) and deals them round-robin, so the schedule is
  exact across workers (`load.planned`); an open loop's in-flight cap is split too.
- Sessions: every worker builds the same seeded users and runs user u if u % N == k
  (`LevelIO.part`), so each user's start offset, turns and think times are what one
  process would draw.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from servecap.core.load_spec import (
    ClosedLevel,
    FixedLevel,
    LevelSpec,
    OpenLevel,
    ReplayLevel,
    SessionsLevel,
)
from servecap.load.open_loop import level_offsets_ns
from servecap.load.planned import PlannedLevel

# Streams one worker process holds before `auto` adds another: on one core of this
# machine servecap's client keeps up with 256 streams of 10 ms tokens and flags itself
# client-bound above that (issue 18's measurement).
STREAMS_PER_WORKER = 256
# An open loop's streams for `auto`: the rate times this many seconds, so one process runs
# rates up to 256 requests/s (about 33,000 tokens/s at 128 tokens a request, where the
# closed loop's 256 streams of 10 ms tokens are 25,600), another for each 256 more.
OPEN_STREAM_S = 1.0


@dataclass(frozen=True, slots=True)
class Share:
    """What worker `worker` runs of a level: a level spec of its own, and the offset that
    maps its stream indices back to the level's (closed loop only)."""

    worker: int
    level: LevelSpec
    stream_offset: int = 0
    part: tuple[int, int] | None = None  # sessions: (k, N), run users with u % N == k


def level_demand(level: LevelSpec) -> int:
    """Streams the level may hold at once, for `auto`."""
    if isinstance(level, ClosedLevel):
        return level.concurrency
    if isinstance(level, SessionsLevel):
        return level.users
    if isinstance(level, OpenLevel):
        return min(level.max_concurrency, math.ceil(level.rate * OPEN_STREAM_S))
    return 1


def auto_workers(level: LevelSpec, cores: int) -> int:
    """`--workers auto` for one level: one process while one core keeps up, then one more
    per `STREAMS_PER_WORKER` streams, never more than the cores this process may use."""
    return max(1, min(cores, math.ceil(level_demand(level) / STREAMS_PER_WORKER)))


def split_level(
    level: LevelSpec, workers: int, row_offset_s: Callable[[int], float] | None = None
) -> list[Share]:
    """The shares of `level` over `workers` processes (a worker with nothing gets none).

    `row_offset_s(i)` is a replay's trace row offset (the parent's source knows it)."""
    if workers < 1:
        raise ValueError("a level needs at least one worker")
    if isinstance(level, ClosedLevel):
        return _split_closed(level, workers)
    if isinstance(level, SessionsLevel):
        return [Share(k, level, part=(k, workers)) for k in range(min(workers, level.users))]
    targets, cap, replay = _targets(level, row_offset_s)
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


def _split_closed(level: ClosedLevel, workers: int) -> list[Share]:
    streams = [len(range(k, level.concurrency, workers)) for k in range(workers)]
    shares, offset, given = [], 0, 0
    for k, c_k in enumerate(streams):
        if c_k == 0:
            continue
        # requests in proportion to streams; the last worker takes the rounding
        n_k = round(level.n_requests * (offset + c_k) / level.concurrency) - given
        if n_k > 0:
            part = replace(level, concurrency=c_k, n_requests=n_k)
            shares.append(Share(k, part, stream_offset=offset))
        offset += c_k
        given += n_k
    return shares


def _targets(
    level: LevelSpec, row_offset_s: Callable[[int], float] | None
) -> tuple[list[tuple[int, int]], int | None, bool]:
    if isinstance(level, OpenLevel):
        return list(enumerate(level_offsets_ns(level))), level.max_concurrency, False
    if isinstance(level, FixedLevel):
        return list(enumerate(level.offsets_ns)), None, False
    if isinstance(level, ReplayLevel):
        if row_offset_s is None:
            raise ValueError("a replay level is split with its trace's row offsets")
        rows = [
            (i, round(row_offset_s(i) * 1e9 / level.speed)) for i in range(level.n_requests)
        ]
        return rows, None, True
    raise TypeError(f"no way to split a {type(level).__name__} over workers")
