"""Trace replay: row i of the trace is sent at `t0 + offset_i / speed`.

Targets are absolute, as in the fixed schedule, so a late wake-up delays one send and
never shifts the rest; each record's `scheduled_at` is its row's target, so `sent_at -
scheduled_at` is how late the client replayed that row (the report's send lateness). The
offsets come from the source's rows (`PlannedRequest.offset_s`, a `TraceSource`), each
level replaying the same rows from row 0; the next row is built while the client waits for
its time, never on the send path.
"""

from __future__ import annotations

from servecap.core.load_spec import ReplayLevel
from servecap.load.on_time import Timed, send_at_targets
from servecap.load.scheduler import LevelIO


async def run_replay_level(level: ReplayLevel, io: LevelIO) -> None:
    """Send the trace's rows at their offsets divided by `level.speed`."""
    request_at = getattr(io.source, "request", None)
    if request_at is None:
        raise TypeError("a replay level needs a trace source (one with request(i))")
    size = getattr(io.source, "size", None)
    rows = level.n_requests if size is None else min(level.n_requests, size)

    def timed() -> Timed:
        for index in range(rows):
            request = request_at(index)
            yield index, round((request.offset_s or 0.0) * 1e9 / level.speed), request

    await send_at_targets(level, io, timed())
