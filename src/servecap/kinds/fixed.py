"""Fixed schedule: each request is sent at a given target time (for deterministic tests).

Targets are absolute (`t0 + offset`), never relative sleeps, so a late wake-up delays one
send without shifting the rest; each record's `scheduled_at` is its target, so the gap to
`sent_at` is the client's lateness. Over workers the targets are dealt round-robin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field, field_validator

from servecap.kinds.base import KindText, LevelSpec, LoadKind, LoadPlan, Share
from servecap.kinds.io import LevelIO
from servecap.kinds.on_time import send_at_targets
from servecap.kinds.planned import deal_targets
from servecap.workload.source import RequestSource


@dataclass(frozen=True, slots=True, kw_only=True)
class FixedLevel(LevelSpec):
    offsets_ns: tuple[int, ...]  # target send times, from the level's start

    WIRE = "FixedLevel"

    def split(self, workers: int, source: RequestSource | None = None) -> list[Share]:
        return deal_targets(self, list(enumerate(self.offsets_ns)), workers)

    async def run(self, io: LevelIO) -> None:
        """Send one request at each of `offsets_ns` after the level starts."""
        timed = ((i, offset, io.source.next_request()) for i, offset in enumerate(self.offsets_ns))
        await send_at_targets(self, io, timed)


class FixedLoad(LoadPlan):
    """Each level sends one request at each of its offsets (seconds from the level start)."""


    kind: Literal["fixed"] = "fixed"
    schedules: list[list[float]] = Field(min_length=1)

    @field_validator("schedules")
    @classmethod
    def _check(cls, value: list[list[float]]) -> list[list[float]]:
        for offsets in value:
            if not offsets or min(offsets) < 0 or offsets != sorted(offsets):
                raise ValueError("each schedule is a non-empty, sorted list of offsets >= 0")
        return value

    def levels(self) -> list[FixedLevel]:
        return [
            FixedLevel(
                key=KIND.key(index + 1),
                n_requests=len(offsets),
                offsets_ns=tuple(round(s * 1e9) for s in offsets),
            )
            for index, offsets in enumerate(self.schedules)
        ]

    def max_in_flight(self) -> int:
        return max(len(offsets) for offsets in self.schedules)


KIND = LoadKind(
    "fixed",
    KindText(
        prefix="fixed",
        unit="",
        quantity="schedule",
        axis_title="fixed schedule (level)",
        mode="fixed schedule",
        methodology="fixed schedule: each request is sent at a given target time",
    ),
    FixedLoad,
    [FixedLevel],
)
