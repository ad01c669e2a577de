"""A time-varying offered rate: arrivals follow a shape (a ramp, steps, a sine, a CSV).

`--load shape=ramp:1:20:60s` offers 1 to 20 requests/s over 60 s; `steps:2,5,10:30s` each
rate for 30 s; `sine:10:5:120s:600s` 10 +- 5 requests/s with a 120 s period (a compressed
diurnal cycle) for 600 s; `shape=day.csv` a file of `second,rate` rows (a production day's
curve). Shapes are separated by `;`, one level each (`shape=1`, `shape=2`, ...).

Arrivals are a non-homogeneous Poisson process drawn by thinning (Lewis-Shedler: candidates
at the shape's peak rate, each kept with probability rate(t) / peak), seeded, and sent on
absolute target times like the open loop's, so each record keeps its scheduled time and
TTFT is also measured from it (no coordinated omission). A level's own block splits it into
time windows: per window the offered rate (arrivals), the achieved rate (completions), and
the SLO statistics over the requests that arrived in it; the plan judges each window and
names the highest offered rate that held the SLOs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import Field, field_validator

from servecap.core.bounded_read import read_bounded
from servecap.core.config import SLO
from servecap.core.errors import UserInputError
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.request_metrics import request_metrics
from servecap.core.summary import LevelSummary
from servecap.kinds.base import (
    KindSeries,
    KindTable,
    KindText,
    LevelSpec,
    LoadKind,
    LoadPlan,
    Share,
)
from servecap.kinds.io import LevelIO
from servecap.kinds.on_time import NS_PER_S, send_at_targets
from servecap.kinds.planned import deal_targets
from servecap.kinds.window import Window
from servecap.stats.percentiles import describe
from servecap.workload.arrivals import MAX_ARRIVALS
from servecap.workload.source import RequestSource

Segment = tuple[float, float, float, float]  # (start_s, end_s, rate at start, rate at end)
FloatArray = npt.NDArray[np.float64]
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}
_CHUNK_MAX = 1 << 20  # candidates drawn per vectorised step: bounds memory, keeps numpy busy


@dataclass(frozen=True, slots=True)
class RateShape:
    """An offered rate over [0, duration_s): linear segments, or a sine (kept as parameters
    rather than a closure so the shape stays hashable and comparable)."""

    text: str
    duration_s: float
    segments: tuple[Segment, ...] = ()
    sine: tuple[float, float, float] | None = None  # (mean, amplitude, period_s)

    def rate_at(self, t_s: float) -> float:
        """Requests/s at t; outside [0, duration) is a caller bug, not user input."""
        if not 0.0 <= t_s < self.duration_s:
            raise ValueError(f"t={t_s} s is outside [0, {self.duration_s}) s")
        return float(self._rates(np.asarray([t_s], dtype=np.float64))[0])

    def peak(self) -> float:
        """Least upper bound of the rate: thinning draws candidates at this rate."""
        if self.sine is not None:
            mean, amp, period = self.sine
            if self.duration_s >= period / 4:
                return mean + amp
            return mean + amp * math.sin(2 * math.pi * self.duration_s / period)
        return max(max(s[2], s[3]) for s in self.segments)

    def expected_requests(self) -> float:
        """Integral of the rate: the expected number of arrivals, in closed form."""
        if self.sine is not None:
            mean, amp, period = self.sine
            w = 2 * math.pi / period
            return mean * self.duration_s + amp / w * (1 - math.cos(w * self.duration_s))
        return sum((end - start) * (r0 + r1) / 2 for start, end, r0, r1 in self.segments)

    def _rates(self, t: FloatArray) -> FloatArray:
        """Vectorised rate at times inside [0, duration); one formula for scalar and thinning."""
        if self.sine is not None:
            mean, amp, period = self.sine
            return mean + amp * np.sin(2 * np.pi * t / period)
        seg = np.asarray(self.segments, dtype=np.float64)
        i = np.clip(np.searchsorted(seg[:, 0], t, side="right") - 1, 0, len(seg) - 1)
        start, end, r0, r1 = seg[i, 0], seg[i, 1], seg[i, 2], seg[i, 3]
        rates: FloatArray = r0 + (r1 - r0) * (t - start) / (end - start)
        return rates


def _number(cell: str) -> float | None:
    """A finite float, or None: 'inf' and 'nan' are never meaningful rates or durations."""
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _bad(text: str, why: str) -> UserInputError:
    return UserInputError(f"invalid rate shape '{text}': {why}")


def _rate(text: str, cell: str) -> float:
    value = _number(cell)
    if value is None:
        raise _bad(text, f"'{cell}' is not a rate (requests/s > 0)")
    if value <= 0:
        raise _bad(text, "a rate must be > 0 requests/s")
    return value


def _duration(text: str, cell: str) -> float:
    """Seconds from '90', '90s', '2m' or '1h'."""
    body, unit = (cell[:-1], cell[-1]) if cell[-1:] in _UNITS else (cell, "s")
    value = _number(body)
    if value is None or value <= 0:
        raise _bad(text, f"'{cell}' is not a duration > 0 (e.g. 90, 90s, 2m, 1h)")
    return value * _UNITS[unit]


def _ramp(text: str, args: list[str]) -> RateShape:
    if len(args) != 3:
        raise _bad(text, "ramp takes R0:R1:DUR, e.g. ramp:1:20:60s")
    r0, r1, dur = _rate(text, args[0]), _rate(text, args[1]), _duration(text, args[2])
    return RateShape(text, dur, ((0.0, dur, r0, r1),))


def _steps(text: str, args: list[str]) -> RateShape:
    if len(args) != 2:
        raise _bad(text, "steps takes R1,R2,...:STEP, e.g. steps:2,5,10:30s")
    rates = [_rate(text, cell) for cell in args[0].split(",")]
    step = _duration(text, args[1])
    segments = tuple((i * step, (i + 1) * step, r, r) for i, r in enumerate(rates))
    return RateShape(text, step * len(rates), segments)


def _sine(text: str, args: list[str]) -> RateShape:
    if len(args) not in (3, 4):
        raise _bad(text, "sine takes MEAN:AMP:PERIOD[:DUR], e.g. sine:10:5:120s:600s")
    mean = _rate(text, args[0])
    amp = _number(args[1])
    if amp is None or amp < 0:
        raise _bad(text, f"'{args[1]}' is not an amplitude (requests/s >= 0)")
    if amp >= mean:
        raise _bad(text, "the amplitude must be < the mean, so the rate stays > 0 requests/s")
    period = _duration(text, args[2])
    dur = _duration(text, args[3]) if len(args) == 4 else period
    return RateShape(text, dur, sine=(mean, amp, period))


SHAPE_LIMIT = 64 * 1024 * 1024  # bytes of a rate shape file read at most


def _read_text(path: Path) -> str:
    """The file's text; every way of failing to read it becomes one message naming it."""
    try:
        return read_bounded(path, SHAPE_LIMIT, "rate shape file").decode("utf-8-sig")
    except FileNotFoundError:
        raise UserInputError(f"rate shape file not found: {path}") from None
    except OSError as exc:
        raise UserInputError(f"cannot read rate shape file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UserInputError(f"rate shape file {path} is not UTF-8 text") from None


def _csv_row(name: str, lineno: int, cells: list[str], second: int) -> float:
    """The rate on one data row, checking that it holds the expected second."""
    where = f"{name} line {lineno}"
    if len(cells) != 2:
        raise UserInputError(f"{where}: expected 'second,rate', found {len(cells)} cells")
    for cell in cells:
        if _number(cell) is None:
            raise UserInputError(f"{where}: '{cell}' is not a number")
    found, rate = float(cells[0]), float(cells[1])
    if not found.is_integer():
        raise UserInputError(f"{where}: '{cells[0]}' is not a whole second")
    if found != second:
        why = "a gap" if found > second else "out of order or repeated"
        raise UserInputError(f"{where}: second {second} expected, found {cells[0]} ({why})")
    if rate <= 0:
        raise UserInputError(f"{where}: a rate must be > 0 requests/s")
    return rate


def _csv(text: str, name: str, base_dir: Path | None) -> RateShape:
    """Per-second rates: row i holds second i; a first row of non-numbers is a header."""
    path = Path(name).expanduser()
    if base_dir is not None and not path.is_absolute():
        path = base_dir / path
    rows = [
        (n, [c.strip().strip('"') for c in line.split(",")])
        for n, line in enumerate(_read_text(path).splitlines(), start=1)
        if line.strip()
    ]
    if rows and all(_number(c) is None for c in rows[0][1]):
        rows = rows[1:]
    if not rows:
        raise UserInputError(f"{name}: empty file, no per-second rates")
    rates = [_csv_row(name, n, cells, i) for i, (n, cells) in enumerate(rows)]
    segments = tuple((float(i), float(i + 1), r, r) for i, r in enumerate(rates))
    return RateShape(text, float(len(rates)), segments)


def parse_shape(text: str, base_dir: Path | None = None) -> RateShape:
    """Parse a user's shape spec; relative CSV paths resolve against base_dir when given."""
    spec = text.strip()
    if spec.lower().startswith("csv:"):
        return _csv(text, spec[4:], base_dir)
    if spec.lower().endswith(".csv"):
        return _csv(text, spec, base_dir)
    kind, *args = spec.split(":")
    parsers = {"ramp": _ramp, "steps": _steps, "sine": _sine}
    if kind.lower() not in parsers:
        raise _bad(text, f"unknown shape '{kind}' (ramp, steps, sine or a .csv file)")
    return parsers[kind.lower()](text, [a.strip() for a in args])


def shape_offsets_s(shape: RateShape, seed: int, max_arrivals: int = MAX_ARRIVALS) -> FloatArray:
    """Arrival offsets (s from the level start), sorted, in [0, duration), by thinning.

    Candidates come from a homogeneous Poisson process at peak() in fixed-size chunks, and
    each is kept with probability rate/peak. The chunk size depends only on the shape, so
    the random stream, and hence the result, is fixed by the seed.
    """
    rng = np.random.default_rng(seed)
    peak = shape.peak()
    expected = peak * shape.duration_s
    chunk = int(min(max(expected + 5 * math.sqrt(expected) + 16, 16), _CHUNK_MAX))
    kept: list[FloatArray] = []
    count, t = 0, 0.0
    while t < shape.duration_s:
        times = t + np.cumsum(rng.exponential(1.0 / peak, chunk))
        accept = rng.random(chunk) * peak < shape._rates(times)
        t = float(times[-1])
        new = times[accept & (times < shape.duration_s)]
        count += len(new)
        if count > max_arrivals:
            raise UserInputError(
                f"rate shape '{shape.text}' would offer more than {max_arrivals} requests "
                f"(about {shape.expected_requests():.0f} expected); shorten it or lower the rates"
            )
        kept.append(new)
    return np.concatenate(kept)


# A level is judged in about this many time windows, each at least MIN_WINDOW_S long.
WINDOWS = 12
MIN_WINDOW_S = 1.0
# Without a cap, at most this many requests in flight (one connection each), as the open loop.
DEFAULT_SHAPE_CAP = 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class ShapeLevel(LevelSpec):
    """One shape: its text (parsed again where it runs), its seed and in-flight cap."""

    shape: str
    seed: int
    max_concurrency: int

    WIRE = "ShapeLevel"

    def planned_requests(self) -> int:
        return len(shape_offsets_ns(self.shape, self.seed))

    def demand(self) -> int:
        return min(self.max_concurrency, math.ceil(parse_shape(self.shape).peak()))

    def window(self) -> Window:
        """Every request counts; the schedule's own columns (TTFT from arrival) are filled."""
        return Window(0.0, 0.0)

    def split(self, workers: int, source: RequestSource | None = None) -> list[Share]:
        targets = list(enumerate(shape_offsets_ns(self.shape, self.seed)))
        return deal_targets(self, targets, workers, cap=self.max_concurrency)

    async def run(self, io: LevelIO) -> None:
        offsets = shape_offsets_ns(self.shape, self.seed)
        timed = ((i, offset, io.source.next_request()) for i, offset in enumerate(offsets))
        await send_at_targets(self, io, timed, cap=self.max_concurrency)


@lru_cache(maxsize=4)
def shape_offsets_ns(text: str, seed: int) -> tuple[int, ...]:
    """The shape's target send times, ns from the level's start (drawn once per process)."""
    return tuple(round(float(t) * NS_PER_S) for t in shape_offsets_s(parse_shape(text), seed))


class ShapeLoad(LoadPlan):
    """Levels of time-varying offered rate, one per shape (`shape=1`, `shape=2`, ...)."""

    kind: Literal["shape"] = "shape"
    shapes: list[str] = Field(min_length=1)
    seed: int = 0
    max_concurrency: int | None = Field(default=None, ge=1, le=100_000)

    @field_validator("shapes")
    @classmethod
    def _parse(cls, value: list[str]) -> list[str]:
        for text in value:
            parse_shape(text)  # a UserInputError names the shape, or the file and line
        return value

    @classmethod
    def from_text(cls, spec: str, seed: int) -> ShapeLoad:
        shapes = [part.strip() for part in spec.split(";")]
        if not all(shapes):
            raise UserInputError(f"invalid rate shape {spec!r}: an empty shape between ';'")
        return cls(shapes=shapes, seed=seed)

    def levels(self) -> list[ShapeLevel]:
        return [
            ShapeLevel(
                key=KIND.key(index + 1), n_requests=max(1, round(shape.expected_requests())),
                shape=text, seed=self.seed + index, max_concurrency=self.max_in_flight(),
            )
            for index, (text, shape) in enumerate((t, parse_shape(t)) for t in self.shapes)
        ]

    def max_in_flight(self) -> int:
        return self.max_concurrency or DEFAULT_SHAPE_CAP


def _window_row(rows: list[RequestRecord], start: int, t0: int, t1: int) -> dict[str, Any]:
    """One time window [t0, t1) s from the level's first arrival: what arrived in it, what
    ended in it, and the SLO statistics of the requests that arrived in it."""
    ns = NS_PER_S
    arrived = [r for r in rows if t0 * ns <= r.scheduled_at - start < t1 * ns]
    ended = [r for r in rows if r.ok and r.ended_at is not None
             and t0 * ns <= r.ended_at - start < t1 * ns]
    measured = [(r, m) for r in arrived if (m := request_metrics(r)) is not None]
    # TTFT from the arrival (the target time), as the open loop's `ttft_sched`
    ttft = [(m.ttft_ns + (r.sent_at or r.scheduled_at) - r.scheduled_at) / 1e6
            for r, m in measured]
    tps = [m.tps for _, m in measured if m.tps is not None]
    width = t1 - t0
    return {
        "t0_s": t0, "t1_s": t1, "n": len(arrived),
        "n_failed": sum(1 for r in arrived if r.status == "failed"),
        "offered_rps": len(arrived) / width, "achieved_rps": len(ended) / width,
        **{f"ttft_{k}_ms": v for k, v in describe(ttft).items() if k in ("mean", "p90")},
        **{f"tps_{k}": v for k, v in describe(tps, True).items() if k in ("mean", "p90")},
    }


def time_windows(records: list[RequestRecord]) -> dict[str, Any]:
    """The level's own block: `WINDOWS` windows of whole seconds over its arrivals."""
    rows = [r for r in records if not r.warmup]
    if not rows:
        return {"window_s": None, "windows": []}
    start = min(r.scheduled_at for r in rows)
    span_s = (max(r.scheduled_at for r in rows) - start) / NS_PER_S
    width = max(MIN_WINDOW_S, math.ceil(span_s / WINDOWS))
    edges = range(0, math.floor(span_s / width) + 1)
    windows = [_window_row(rows, start, round(k * width), round((k + 1) * width)) for k in edges]
    return {"window_s": width, "windows": windows}


def _held(window: dict[str, Any], slo: SLO) -> bool:
    ttft, tps = window.get(f"ttft_{slo.statistic}_ms"), window.get(f"tps_{slo.statistic}")
    return (window["n"] > 0 and not window["n_failed"] and ttft is not None
            and ttft <= slo.ttft_ms and tps is not None and tps >= slo.tps)


def _cell(value: float | None, digits: int) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


class ShapeKind(LoadKind):
    def summary_fields(self, key: LevelKey, records: list[RequestRecord]) -> dict[str, Any]:
        return {"kind_block": time_windows(records)}

    def tables(self, level: LevelSummary, slo: SLO) -> list[KindTable]:
        windows = (level.kind_block or {}).get("windows") or []
        if not windows:
            return []
        stat = slo.statistic
        label = "P90" if stat == "p90" else "mean"
        rows = [[f"{w['t0_s']}-{w['t1_s']}", _cell(w["offered_rps"], 2),
                 _cell(w["achieved_rps"], 2), str(w["n"]), str(w["n_failed"]),
                 _cell(w.get(f"ttft_{stat}_ms"), 1), _cell(w.get(f"tps_{stat}"), 1),
                 "yes" if _held(w, slo) else "no"] for w in windows]
        held = [w["offered_rps"] for w in windows if _held(w, slo)]
        note = (f"highest offered rate that held the SLOs: {max(held):.2f} requests/s"
                if held else "no window held the SLOs")
        header = ["window (s)", "offered req/s", "achieved req/s", "n", "failed",
                  f"TTFT {label} from arrival (ms)", f"TPS {label}", "held the SLOs"]
        return [KindTable(f"over time ({label}, TTFT <= {slo.ttft_ms:g} ms, TPS >= "
                          f"{slo.tps:g})", header, rows, note)]

    def series(self, level: LevelSummary) -> list[KindSeries]:
        windows = (level.kind_block or {}).get("windows") or []
        if not windows:
            return []
        mid = [(w["t0_s"] + w["t1_s"]) / 2 for w in windows]

        def line(name: str) -> tuple[list[float], list[float | None]]:
            return mid, [w.get(name) for w in windows]

        return [
            KindSeries(f"{level.key.value}-rate", f"{level.key}: offered and achieved rate",
                       "Arrivals and completions per second in each time window.",
                       "time (s)", "requests/s",
                       {"offered": line("offered_rps"), "achieved": line("achieved_rps")}),
            KindSeries(f"{level.key.value}-ttft", f"{level.key}: TTFT from arrival over time",
                       "TTFT of the requests that arrived in each window, from their target "
                       "time.", "time (s)", "ms",
                       {"mean": line("ttft_mean_ms"), "P90": line("ttft_p90_ms")}),
        ]


KIND = ShapeKind(
    "shape",
    KindText(
        prefix="shape",
        unit="",
        quantity="rate shape",
        axis_title="rate shape (level)",
        mode="time-varying rate",
        methodology=(
            "time-varying rate: requests arrive as a Poisson process whose rate follows a "
            "shape (ramp, steps, sine or a per-second CSV), on absolute target times; each "
            "time window is judged on its own"
        ),
        example="shape=ramp:1:20:60s",
    ),
    ShapeLoad,
    [ShapeLevel],
)
