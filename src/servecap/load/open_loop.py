"""Open loop: requests arrive at an offered rate, whether or not earlier ones have ended.

Target times come from `workload.arrivals` (`t0 + cumulative gaps`, seeded) and each
request is written at its absolute target (`load.on_time`), never after a gap from the last
send, so a late wake-up delays one request without shifting the rest. Each record's
`scheduled_at` is its target: `sent_at - scheduled_at` is the send lateness, and TTFT and
latency from `scheduled_at` are what a user arriving then would see (no coordinated
omission).

The cap on requests in flight (`max_concurrency`) is `send_at_targets`' own: an arrival
that finds it full waits, and that wait stays inside `sent_at - scheduled_at`.
"""

from __future__ import annotations

from servecap.core.load_spec import OpenLevel
from servecap.load.on_time import NS_PER_S, send_at_targets
from servecap.load.scheduler import LevelIO
from servecap.workload.arrivals import ArrivalProcess


def level_offsets_ns(level: OpenLevel) -> list[int]:
    """The level's target send times, ns from its start (the arrivals' own contract)."""
    process = ArrivalProcess(level.arrival, level.rate, level.burstiness)  # type: ignore[arg-type]
    offsets = process.offsets(seed=level.seed, count=level.requests, duration=level.duration_s)
    return [round(float(t) * NS_PER_S) for t in offsets]


async def run_open_level(level: OpenLevel, io: LevelIO) -> None:
    """Send one request at each arrival of `level`; at most `max_concurrency` in flight."""
    offsets = level_offsets_ns(level)
    timed = ((i, offset, io.source.next_request()) for i, offset in enumerate(offsets))
    await send_at_targets(level, io, timed, cap=level.max_concurrency)
