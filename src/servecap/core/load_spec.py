"""The load plan: a `LoadSpec`, discriminated on its kind, that yields one spec per level.

Today's kinds are `closed` (the seed's concurrency sweep) and `fixed` (sends at given target
times, for deterministic tests). A new kind (open-loop rates, sessions of users, trace
replay) is a new model here, one member of the `LoadSpec` union, an entry in
`level_key.LEVEL_KINDS` and a scheduler registered in `load.schedulers`; the other kinds
are not touched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from servecap.core.level_key import LevelKey


@dataclass(frozen=True, slots=True, kw_only=True)
class LevelSpec:
    """What one level runs: its key, how many requests it sends, whether it is warm-up."""

    key: LevelKey
    n_requests: int
    warmup: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ClosedLevel(LevelSpec):
    concurrency: int


@dataclass(frozen=True, slots=True, kw_only=True)
class FixedLevel(LevelSpec):
    offsets_ns: tuple[int, ...]  # target send times, from the level's start


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayLevel(LevelSpec):
    speed: float  # the trace's offsets are divided by this


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionsLevel(LevelSpec):
    """N virtual users holding conversations for `ramp_s + duration_s` seconds.

    `n_requests` is a lower bound (each user's first turn): a sessions level sends as many
    turns as its users' think times fit into the duration.
    """

    users: int
    think: str  # a think-time spec (`workload.think_time`), parsed by the scheduler
    turns: str  # a turn-count spec
    ramp_s: float
    duration_s: float
    seed: int


def warmup_level(n_requests: int) -> ClosedLevel:
    """Warm-up is one stream whatever the kind; its rows are marked and never form a level."""
    return ClosedLevel(
        key=LevelKey.closed(1), n_requests=n_requests, warmup=True, concurrency=1
    )


class ClosedLoad(BaseModel):
    """Levels of concurrency: at c, c streams send `rounds x c` requests back to back."""

    model_config = ConfigDict(extra="forbid", frozen=True)

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


class FixedLoad(BaseModel):
    """Each level sends one request at each of its offsets (seconds from the level start)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

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
                key=LevelKey("fixed", index + 1),
                n_requests=len(offsets),
                offsets_ns=tuple(round(s * 1e9) for s in offsets),
            )
            for index, offsets in enumerate(self.schedules)
        ]

    def max_in_flight(self) -> int:
        return max(len(offsets) for offsets in self.schedules)


# The most connections a replay opens: a trace's requests in flight, not its rows.
REPLAY_POOL = 2048


class ReplayLoad(BaseModel):
    """A trace replayed once per speed: row i sent at its offset / speed (`--trace`).

    The offsets live in the trace file, read again by the run; `rows` is how many rows the
    window holds, so the plan knows its size before any load."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["replay"] = "replay"
    trace: str
    format: str = "auto"
    start_s: float = Field(default=0.0, ge=0)
    duration_s: float | None = Field(default=None, gt=0)
    speeds: list[float] = Field(default_factory=lambda: [1.0], min_length=1)
    rows: int = Field(ge=1)

    @field_validator("speeds")
    @classmethod
    def _check_speeds(cls, value: list[float]) -> list[float]:
        if any(not speed > 0 for speed in value):
            raise ValueError("every trace speed is a number > 0")
        return value

    def levels(self) -> list[ReplayLevel]:
        return [
            ReplayLevel(key=LevelKey("replay", speed), n_requests=self.rows, speed=speed)
            for speed in sorted(set(self.speeds))
        ]

    def max_in_flight(self) -> int:
        return min(self.rows, REPLAY_POOL)


class SessionsLoad(BaseModel):
    """Levels of virtual users (`users=100`): each holds a multi-turn chat, thinks between
    turns, and opens a new conversation after its last turn.

    Users start spread evenly over `ramp_s`; requests sent during the ramp are the level's
    warm-up (recorded, marked `warmup`, left out of its statistics), so the level measures
    the `duration_s` after it. Specs are kept as text; the front end checks they parse.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["sessions"] = "sessions"
    users: list[int] = Field(min_length=1)
    think: str = "exp:45"
    turns: str = "uniform:2:8"
    ramp_s: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    duration_s: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    seed: int = 0

    @field_validator("users")
    @classmethod
    def _check_users(cls, value: list[int]) -> list[int]:
        if min(value) < 1:
            raise ValueError("user counts are integers >= 1")
        return value

    def levels(self) -> list[SessionsLevel]:
        return [
            SessionsLevel(
                key=LevelKey("sessions", n), n_requests=n, users=n, think=self.think,
                turns=self.turns, ramp_s=self.ramp_s, duration_s=self.duration_s,
                seed=self.seed,
            )
            for n in sorted(set(self.users))
        ]

    def max_in_flight(self) -> int:
        return max(self.users)


LoadSpec = Annotated[
    ClosedLoad | FixedLoad | ReplayLoad | SessionsLoad, Field(discriminator="kind")
]
