"""Trace replay: row i of the trace is sent at `t0 + offset_i / speed`.

Targets are absolute, as in the fixed schedule, so a late wake-up delays one send and
never shifts the rest; each record's `scheduled_at` is its row's target, so `sent_at -
scheduled_at` is how late the client replayed that row (the report's send lateness). The
offsets come from the source's rows (`PlannedRequest.offset_s`, a `TraceSource`), each
level replaying the same rows from row 0; the next row is built while the client waits for
its time, never on the send path. Over workers the rows' targets are dealt round-robin.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, field_validator

from servecap.core.errors import bad_setting
from servecap.kinds.base import KindText, LevelSpec, LoadKind, LoadPlan, Share
from servecap.kinds.io import LevelIO
from servecap.kinds.on_time import Timed, send_at_targets
from servecap.kinds.planned import deal_targets
from servecap.workload.source import RequestSource
from servecap.workload.sources import PlannedRequest, TraceSource
from servecap.workload.tokenize import ExactTokens
from servecap.workload.traces import MAX_REPLAY_S, Trace, read_trace

# The most connections a replay opens: a trace's requests in flight, not its rows.
REPLAY_POOL = 2048


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayLevel(LevelSpec):
    speed: float  # the trace's offsets are divided by this

    WIRE = "ReplayLevel"

    def split(self, workers: int, source: RequestSource | None = None) -> list[Share]:
        request_at = _rows(source)
        rows = [
            (i, round((request_at(i).offset_s or 0.0) * 1e9 / self.speed))
            for i in range(self.n_requests)
        ]
        return deal_targets(self, rows, workers, replay=True)

    async def run(self, io: LevelIO) -> None:
        """Send the trace's rows at their offsets divided by `speed`."""
        request_at = _rows(io.source)
        size = getattr(io.source, "size", None)
        rows = self.n_requests if size is None else min(self.n_requests, size)

        def timed() -> Timed:
            for index in range(rows):
                request = request_at(index)
                yield index, round((request.offset_s or 0.0) * 1e9 / self.speed), request

        await send_at_targets(self, io, timed())


def _rows(source: RequestSource | None) -> Callable[[int], PlannedRequest]:
    request_at: Callable[[int], PlannedRequest] | None = getattr(source, "request", None)
    if request_at is None:
        raise TypeError("a replay level needs a trace source (one with request(i))")
    return request_at


class ReplayLoad(LoadPlan):
    """A trace replayed once per speed: row i sent at its offset / speed (`--trace`).

    The offsets live in the trace file, read again by the run; `rows` is how many rows the
    window holds, so the plan knows its size before any load."""


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
            ReplayLevel(key=KIND.key(speed), n_requests=self.rows, speed=speed)
            for speed in sorted(set(self.speeds))
        ]

    def max_in_flight(self) -> int:
        return min(self.rows, REPLAY_POOL)

    def trace_rows(self) -> Trace:
        """The rows a replay sends: the trace's window, in the trace's own seconds. A replay
        that would last longer than `MAX_REPLAY_S` at its slowest speed is refused (a row at
        a huge timestamp, or a tiny speed, is a wait without end)."""
        rows = read_trace(self.trace, self.format).window(self.start_s, self.duration_s)
        slowest = min(self.speeds)
        if rows.span_s / slowest > MAX_REPLAY_S:
            raise bad_setting(
                "trace_speed", f"{slowest:g}: the replay would last "
                f"{rows.span_s / slowest:.3g} s, more than {MAX_REPLAY_S // 86400} days")
        return rows

    def own_source(self, seed: int, tokenizer: ExactTokens | None) -> TraceSource:
        return TraceSource(self.trace_rows(), seed=seed, tokenizer=tokenizer)

    def extra_body(self) -> dict[str, Any]:
        """Ask the engine not to stop at EOS, so each row gets its recorded output length."""
        return {"ignore_eos": True}


KIND = LoadKind(
    "replay",
    KindText(
        prefix="speed",
        unit="x",
        quantity="trace speed",
        axis_title="trace speed (x recorded)",
        mode="trace replay",
        methodology=(
            "trace replay: each trace row is sent at its recorded offset divided by the "
            "speed, with its recorded input length and asking for its recorded output length"
        ),
    ),
    ReplayLoad,
    [ReplayLevel],
)
