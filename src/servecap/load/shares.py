"""How many worker processes a level gets, and its shares over them (sans-I/O).

The split itself is the level's kind's (`LevelSpec.split`); this module decides how many
processes `--workers auto` gives a level from the streams its kind says it demands.
"""

from __future__ import annotations

import math

from servecap.kinds.base import LevelSpec, Share
from servecap.workload.source import RequestSource

# Streams one worker process holds before `auto` adds another: on one core of this
# machine servecap's client keeps up with 256 streams of 10 ms tokens and flags itself
# client-bound above that (issue 18's measurement).
STREAMS_PER_WORKER = 256


def auto_workers(level: LevelSpec, cores: int) -> int:
    """`--workers auto` for one level: one process while one core keeps up, then one more
    per `STREAMS_PER_WORKER` streams, never more than the cores this process may use."""
    return max(1, min(cores, math.ceil(level.demand() / STREAMS_PER_WORKER)))


def split_level(
    level: LevelSpec, workers: int, source: RequestSource | None = None
) -> list[Share]:
    """The shares of `level` over `workers` processes (a worker with nothing gets none)."""
    if workers < 1:
        raise ValueError("a level needs at least one worker")
    return level.split(workers, source)
