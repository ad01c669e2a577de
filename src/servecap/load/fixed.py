"""Fixed schedule: each request is sent at a given target time (for deterministic tests).

Targets are absolute (`t0 + offset`), never relative sleeps, so a late wake-up delays one
send without shifting the rest; each record's `scheduled_at` is its target, so the gap to
`sent_at` is the client's lateness.
"""

from __future__ import annotations

from servecap.core.load_spec import FixedLevel
from servecap.load.on_time import send_at_targets
from servecap.load.scheduler import LevelIO


async def run_fixed_level(level: FixedLevel, io: LevelIO) -> None:
    """Send one request at each of `level.offsets_ns` after the level starts."""
    timed = ((i, offset, io.source.next_request()) for i, offset in enumerate(level.offsets_ns))
    await send_at_targets(level, io, timed)
