"""The steady-state window of one level: which records its statistics count.

A level ramps up (the server fills from idle) and drains (arrivals stop, load falls); what
it measures in those edges is not the load it was asked for. With a window of
`warmup_s`/`cooldown_s`, a request that STARTS (is scheduled) in the first `warmup_s` after
the level's first target time, or ENDS in the last `cooldown_s` before the level's last
end, is left out of the level's statistics; it stays in requests.jsonl. A record without
an end (cancelled before it was sent) counts as ending at its scheduled time.

Pure, and for any load kind: a kind says which window its levels ask for
(`LoadKind.window`); a caller gives the records of one level and the window, and gets the
kept ones, the left-out count and the span the kept ones measure (for rates over the window).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from servecap.core.records import RequestRecord

NS_PER_S = 1_000_000_000


@dataclass(frozen=True, slots=True)
class Window:
    """Seconds left out at each edge of a level (0, 0 keeps every record)."""

    warmup_s: float = 0.0
    cooldown_s: float = 0.0

    def __post_init__(self) -> None:
        if self.warmup_s < 0 or self.cooldown_s < 0:
            raise ValueError("a window's warm-up and cool-down are seconds >= 0")

    @property
    def empty(self) -> bool:
        return self.warmup_s == 0 and self.cooldown_s == 0


@dataclass(frozen=True, slots=True)
class Windowed:
    """One level's records split by a window."""

    kept: list[RequestRecord]
    left_out: int
    start_ns: int | None  # the window's bounds, perf_counter ns (None: no records)
    end_ns: int | None

    @property
    def span_s(self) -> float | None:
        """The window's length in seconds, None when it is empty or inverted."""
        if self.start_ns is None or self.end_ns is None or self.end_ns <= self.start_ns:
            return None
        return (self.end_ns - self.start_ns) / NS_PER_S


def _end_ns(record: RequestRecord) -> int:
    return record.ended_at if record.ended_at is not None else record.scheduled_at


def apply_window(records: Sequence[RequestRecord], window: Window) -> Windowed:
    """Keep the records that start at or after `first target + warmup_s` and end at or
    before `last end - cooldown_s`."""
    if not records:
        return Windowed([], 0, None, None)
    start = min(r.scheduled_at for r in records) + round(window.warmup_s * NS_PER_S)
    end = max(_end_ns(r) for r in records) - round(window.cooldown_s * NS_PER_S)
    kept = [r for r in records if r.scheduled_at >= start and _end_ns(r) <= end]
    return Windowed(kept, len(records) - len(kept), start, end)
