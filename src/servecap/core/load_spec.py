"""The load plan: a `LoadSpec`, discriminated on its kind, that yields one spec per level.

Today's kinds are `closed` (the seed's concurrency sweep), `fixed` (sends at given target
times, for deterministic tests), `replay` (a trace, once per speed), `sessions` (virtual
users) and `open` (offered rates, open-loop arrivals). A new kind is a new model here, one
member of the `LoadSpec` union, an entry in `level_key.LEVEL_KINDS` and a scheduler
registered in `load.schedulers`; the other kinds are not touched.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from servecap.core.errors import UserInputError
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


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenLevel(LevelSpec):
    """One rate of an open loop; the scheduler draws its target times (workload.arrivals)."""

    rate: float
    arrival: str
    burstiness: float
    seed: int
    duration_s: float | None  # arrivals for this long, or
    requests: int | None  # this many arrivals
    max_concurrency: int  # an arrival finding this many in flight waits (recorded)
    warmup_s: float
    cooldown_s: float


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

    Users start as a steady population would send (each after a draw of the think time's
    residual, `workload.sessions`); requests sent in the first `ramp_s` are the level's
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


ArrivalName = Literal["poisson", "constant", "gamma"]
PROCESSES: tuple[str, ...] = ("poisson", "constant", "gamma")  # as workload.arrivals

# Per-level steady-state window an open loop gets unless told otherwise.
OPEN_WARMUP_S = 5.0
OPEN_COOLDOWN_S = 5.0
# Without --max-concurrency an open loop still holds at most this many in flight (one
# connection each); an arrival that finds them all busy waits, and the wait is recorded.
DEFAULT_OPEN_CAP = 1024
# How many arrivals a level may plan (matches workload.arrivals.MAX_ARRIVALS).
MAX_OPEN_REQUESTS = 50_000_000


def parse_rates(text: str) -> list[float]:
    """Rates from `0.5,1,2`: numbers > 0 requests/s; an empty item is refused."""
    items = [part.strip() for part in text.split(",")]
    if not all(items):
        raise UserInputError(f"invalid --rate {text.strip()[:80]!r}: an empty rate between commas")
    rates = []
    for item in items:
        try:
            rate = float(item.removesuffix("/s"))
        except ValueError:
            message = f"invalid --rate {item!r}: rates are numbers of requests/s"
            raise UserInputError(message) from None
        if not (math.isfinite(rate) and rate > 0):
            raise UserInputError(f"invalid --rate {item!r}: a rate must be > 0 requests/s")
        rates.append(rate)
    return rates


class OpenLoad(BaseModel):
    """Levels of offered rate: each level's requests arrive on absolute target times drawn
    from `arrival` at that rate (seeded), for `duration_s` seconds or `requests` arrivals.

    `warmup_s`/`cooldown_s` are the level's steady-state window: requests starting in the
    first `warmup_s` or ending in the last `cooldown_s` stay in requests.jsonl but are left
    out of the level's statistics (`metrics.window`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["open"] = "open"
    rates: list[float] = Field(min_length=1)
    arrival: ArrivalName = "poisson"
    burstiness: float = Field(default=1.0, gt=0)
    duration_s: float | None = Field(default=None, gt=0)
    requests: int | None = Field(default=None, ge=1, le=MAX_OPEN_REQUESTS)
    max_concurrency: int | None = Field(default=None, ge=1, le=100_000)
    warmup_s: float = Field(default=OPEN_WARMUP_S, ge=0)
    cooldown_s: float = Field(default=OPEN_COOLDOWN_S, ge=0)
    seed: int = 0

    @field_validator("rates")
    @classmethod
    def _check_rates(cls, value: list[float]) -> list[float]:
        if any(not (rate > 0 and rate < float("inf")) for rate in value):
            raise ValueError("rates are numbers > 0 requests/s")
        return sorted(set(value))

    @model_validator(mode="after")
    def _one_bound(self) -> OpenLoad:
        if (self.duration_s is None) == (self.requests is None):
            raise ValueError("give exactly one of a duration and a number of requests")
        if self.duration_s is not None and self.warmup_s + self.cooldown_s >= self.duration_s:
            raise ValueError(
                f"the warm-up ({self.warmup_s:g} s) and cool-down ({self.cooldown_s:g} s) "
                f"leave nothing of a {self.duration_s:g} s level to measure"
            )
        return self

    def levels(self) -> list[OpenLevel]:
        return [self._level(index, rate) for index, rate in enumerate(self.rates)]

    def _level(self, index: int, rate: float) -> OpenLevel:
        planned = self.requests or max(1, round(rate * (self.duration_s or 0.0)))
        return OpenLevel(
            key=LevelKey("open", rate), n_requests=planned, rate=rate, arrival=self.arrival,
            burstiness=self.burstiness, seed=self.seed + index, duration_s=self.duration_s,
            requests=self.requests, max_concurrency=self.max_in_flight(),
            warmup_s=self.warmup_s, cooldown_s=self.cooldown_s,
        )

    def max_in_flight(self) -> int:
        """The cap on requests in flight, which is also the connection pool's size."""
        return self.max_concurrency or DEFAULT_OPEN_CAP


LoadSpec = Annotated[
    ClosedLoad | FixedLoad | ReplayLoad | SessionsLoad | OpenLoad,
    Field(discriminator="kind"),
]
