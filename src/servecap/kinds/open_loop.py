"""Open loop: requests arrive at an offered rate, whether or not earlier ones have ended.

Target times come from `workload.arrivals` (`t0 + cumulative gaps`, seeded) and each
request is written at its absolute target (`load.on_time`), never after a gap from the last
send, so a late wake-up delays one request without shifting the rest. Each record's
`scheduled_at` is its target: `sent_at - scheduled_at` is the send lateness, and TTFT and
latency from `scheduled_at` are what a user arriving then would see (no coordinated
omission).

The cap on requests in flight (`max_concurrency`) is `send_at_targets`' own: an arrival
that finds it full waits, and that wait stays inside `sent_at - scheduled_at`. Over
workers the parent draws every target once and deals them round-robin, the cap split too.
The top level within the SLOs is the highest compliant offered rate X, and the users it
serves follow the response-time law N = X * (R + Z). Its levels' statistics count a
steady-state window (`warmup_s`/`cooldown_s`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from servecap.core.errors import bad_setting
from servecap.core.level_key import LevelKey
from servecap.kinds.base import KindText, LevelSpec, LoadKind, LoadPlan, Share
from servecap.kinds.io import LevelIO
from servecap.kinds.on_time import NS_PER_S, send_at_targets
from servecap.kinds.planned import deal_targets
from servecap.kinds.window import Window
from servecap.stats.response_time import users_for_throughput
from servecap.workload.arrivals import ArrivalProcess
from servecap.workload.source import RequestSource

ArrivalName = Literal["poisson", "constant", "gamma"]
PROCESSES: tuple[str, ...] = ("poisson", "constant", "gamma")  # as workload.arrivals

# Per-level steady-state window an open loop gets unless told otherwise.
OPEN_WARMUP_S = 5.0
OPEN_COOLDOWN_S = 5.0
# Without --max-concurrency an open loop still holds at most this many in flight (one
# connection each); an arrival that finds them all busy waits, and the wait is recorded.
DEFAULT_OPEN_CAP = 1024
# Seconds each rate is offered unless told otherwise.
DEFAULT_DURATION_S = 60.0
# How many arrivals a level may plan (matches workload.arrivals.MAX_ARRIVALS).
MAX_OPEN_REQUESTS = 50_000_000
# An open loop's streams for `auto`: the rate times this many seconds, so one process runs
# rates up to 256 requests/s (about 33,000 tokens/s at 128 tokens a request, where the
# closed loop's 256 streams of 10 ms tokens are 25,600), another for each 256 more.
OPEN_STREAM_S = 1.0


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenLevel(LevelSpec):
    """One rate of an open loop; its target times are drawn once (`level_offsets_ns`)."""

    rate: float
    arrival: str
    burstiness: float
    seed: int
    duration_s: float | None  # arrivals for this long, or
    requests: int | None  # this many arrivals
    max_concurrency: int  # an arrival finding this many in flight waits (recorded)
    warmup_s: float
    cooldown_s: float

    WIRE = "OpenLevel"

    def planned_requests(self) -> int:
        """Bounded by a duration, the count is its arrivals' (`n_requests` is only rate x
        duration); the draw is cached, so the run sends the very arrivals it counted."""
        return len(level_offsets_ns(self)) if self.duration_s is not None else self.n_requests

    def window(self) -> Window:
        return Window(self.warmup_s, self.cooldown_s)

    def demand(self) -> int:
        return min(self.max_concurrency, math.ceil(self.rate * OPEN_STREAM_S))

    def split(self, workers: int, source: RequestSource | None = None) -> list[Share]:
        targets = list(enumerate(level_offsets_ns(self)))
        return deal_targets(self, targets, workers, cap=self.max_concurrency)

    async def run(self, io: LevelIO) -> None:
        """Send one request at each arrival; at most `max_concurrency` in flight."""
        offsets = level_offsets_ns(self)
        timed = ((i, offset, io.source.next_request()) for i, offset in enumerate(offsets))
        await send_at_targets(self, io, timed, cap=self.max_concurrency)


@lru_cache(maxsize=4)
def level_offsets_ns(level: OpenLevel) -> tuple[int, ...]:
    """The level's target send times, ns from its start (the arrivals' own contract)."""
    process = ArrivalProcess(level.arrival, level.rate, level.burstiness)  # type: ignore[arg-type]
    offsets = process.offsets(seed=level.seed, count=level.requests, duration=level.duration_s)
    return tuple(round(float(t) * NS_PER_S) for t in offsets)


def parse_rates(text: str) -> list[float]:
    """Rates from `0.5,1,2`: numbers > 0 requests/s; an empty item is refused."""
    items = [part.strip() for part in text.split(",")]
    if not all(items):
        raise bad_setting("rate", f"{text.strip()[:80]!r}: an empty rate between commas",
                          "invalid ")
    rates = []
    for item in items:
        try:
            rate = float(item.removesuffix("/s"))
        except ValueError:
            raise bad_setting("rate", f"{item!r}: rates are numbers of requests/s",
                              "invalid ") from None
        if not (math.isfinite(rate) and rate > 0):
            raise bad_setting("rate", f"{item!r}: a rate must be > 0 requests/s", "invalid ")
        rates.append(rate)
    return rates


class OpenLoad(LoadPlan):
    """Levels of offered rate: each level's requests arrive on absolute target times drawn
    from `arrival` at that rate (seeded), for `duration_s` seconds or `requests` arrivals.

    `warmup_s`/`cooldown_s` are the level's steady-state window: requests starting in the
    first `warmup_s` or ending in the last `cooldown_s` stay in requests.jsonl but are left
    out of the level's statistics (`kinds.window`).
    """


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
        if self.requests is not None:
            # the arrivals' expected span at the highest rate (the shortest level)
            span = self.requests / max(self.rates)
            if self.warmup_s + self.cooldown_s >= span:
                raise ValueError(
                    f"{self.requests} requests at {max(self.rates):g}/s arrive in about "
                    f"{span:g} s, all inside the warm-up ({self.warmup_s:g} s) and cool-down "
                    f"({self.cooldown_s:g} s): nothing would be measured"
                )
        return self

    def levels(self) -> list[OpenLevel]:
        return [self._level(index, rate) for index, rate in enumerate(self.rates)]

    def _level(self, index: int, rate: float) -> OpenLevel:
        planned = self.requests or max(1, round(rate * (self.duration_s or 0.0)))
        return OpenLevel(
            key=KIND.key(rate), n_requests=planned, rate=rate, arrival=self.arrival,
            burstiness=self.burstiness, seed=self.seed + index, duration_s=self.duration_s,
            requests=self.requests, max_concurrency=self.max_in_flight(),
            warmup_s=self.warmup_s, cooldown_s=self.cooldown_s,
        )

    @classmethod
    def from_text(cls, spec: str, seed: int) -> OpenLoad:
        """Rates, each for `DEFAULT_DURATION_S` (`--rate` has the other settings)."""
        return cls(rates=parse_rates(spec), duration_s=DEFAULT_DURATION_S, seed=seed)

    def max_in_flight(self) -> int:
        """The cap on requests in flight, which is also the connection pool's size."""
        return self.max_concurrency or DEFAULT_OPEN_CAP


class OpenKind(LoadKind):
    def offered_rate(self, key: LevelKey) -> float:
        return float(key.value)

    def users_at(self, key: LevelKey, latency_mean_s: float, think_time_s: float) -> int:
        """N = X * (R + Z): X the offered rate of the top level, R its mean latency."""
        return round(users_for_throughput(float(key.value), latency_mean_s, think_time_s))

    def capacity_fields(self, key: LevelKey) -> dict[str, Any]:
        return {"rate_max": float(key.value)}


KIND = OpenKind(
    "open",
    KindText(
        prefix="rate",
        unit="/s",
        quantity="offered rate (requests/s)",
        axis_title="offered rate (requests/s)",
        mode="open loop",
        methodology=(
            "open loop: requests arrive at a given rate on absolute target times, whether or "
            "not earlier ones have ended (latency and TTFT are also measured from each "
            "request's target time, free of coordinated omission)"
        ),
        example="rate=0.5,1,2",
    ),
    OpenLoad,
    [OpenLevel],
)
