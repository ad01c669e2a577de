"""Request traces: arrival offsets and token lengths of recorded production traffic.

Contract:
- `read_trace(path, fmt)` reads one of `FORMATS` (or `auto`, which names what it chose in
  `Trace.format`) into columns: `offsets` (float64 seconds since the trace's first request,
  non-decreasing; equal offsets are fine: Mooncake has many), `input_tokens` and
  `output_tokens` (int64, >= 1), and for Mooncake the prompt's 512-token block ids, stored
  flat (`block_ids(i)` gives request i's ids). Columns, not row objects: a 12k-row trace
  costs a few MB, and prompt text is built later, per request (see `workload.sources`).
- Formats: `mooncake` JSONL (`timestamp` ms, `input_length`, `output_length`, `hash_ids`);
  `azure` CSV (`TIMESTAMP` wall clock with up to 7 fractional digits, `ContextTokens`,
  `GeneratedTokens`); `burstgpt` CSV (`Timestamp` s, `Request tokens`, `Response tokens`).
  Offsets of every format are rebased to the first row, so replay starts at once.
- Bad input raises `DataFormatError` (a `UserInputError`) whose one message names the file,
  the line and the column: not JSON, a missing column, a non-number, a negative or
  decreasing timestamp, a length < 1, an unknown or undetectable format, an empty file.
- `Trace.window(start_s, duration_s)` keeps rows with start <= offset < start + duration and
  rebases them to start; `Trace.scaled(speed)` divides offsets by speed (2 = twice as fast).
  Window in the trace's own seconds first, then scale.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import numpy as np

from servecap.core.errors import DataFormatError, SettingError, UserInputError, bad_setting
from servecap.workload.files import gc_paused, json_line, read_text

FORMATS: tuple[str, ...] = ("mooncake", "azure", "burstgpt")
# Column names per format: (time, input length, output length).
CSV_COLUMNS: dict[str, tuple[str, str, str]] = {
    "azure": ("TIMESTAMP", "ContextTokens", "GeneratedTokens"),
    "burstgpt": ("Timestamp", "Request tokens", "Response tokens"),
}
MOONCAKE_KEYS: tuple[str, ...] = ("timestamp", "input_length", "output_length", "hash_ids")
MOONCAKE_BLOCK_TOKENS = 512
# Far past any context window: a longer row is corrupt, and its prompt would not fit memory.
MAX_TOKENS = 10_000_000
MAX_REPLAY_S = 30 * 86400  # the longest stretch of a trace one replay may cover


@dataclass(frozen=True, slots=True, eq=False)
class Trace:
    """A trace as columns; row i is one request."""

    path: str
    format: str
    offsets: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    block_flat: np.ndarray | None = None  # every row's block ids, concatenated
    block_starts: np.ndarray | None = None  # row i's ids: block_flat[starts[i]:starts[i+1]]

    def __len__(self) -> int:
        return int(self.offsets.size)

    @property
    def has_blocks(self) -> bool:
        return self.block_flat is not None

    def block_ids(self, i: int) -> np.ndarray:
        """Request i's prompt block ids (empty for formats without them)."""
        if self.block_flat is None or self.block_starts is None:
            return np.empty(0, dtype=np.int64)
        return self.block_flat[self.block_starts[i] : self.block_starts[i + 1]]

    @property
    def span_s(self) -> float:
        """Seconds from the first to the last arrival."""
        return float(self.offsets[-1] - self.offsets[0]) if len(self) else 0.0

    def window(self, start_s: float = 0.0, duration_s: float | None = None) -> Trace:
        """Rows with start <= offset < start + duration, offsets rebased to `start_s`."""
        if not (math.isfinite(start_s) and start_s >= 0):
            raise bad_setting("trace_start", f"{start_s!r}: expected seconds >= 0")
        if duration_s is not None and not (math.isfinite(duration_s) and duration_s > 0):
            raise bad_setting("trace_duration", f"{duration_s!r}: expected seconds > 0")
        end = math.inf if duration_s is None else start_s + duration_s
        lo = int(np.searchsorted(self.offsets, start_s, side="left"))
        hi = int(np.searchsorted(self.offsets, end, side="left"))
        if lo >= hi:
            raise UserInputError(
                f"{self.path}: no request in the window {start_s:g}..{end:g} s "
                f"(the trace spans {self.span_s:.1f} s)"
            )
        span = float(self.offsets[hi - 1] - start_s)
        if span > MAX_REPLAY_S:  # a row at a huge timestamp would be waited for, forever
            raise SettingError(
                f"{self.path}: the replayed requests span {span:.3g} s, more than "
                f"{MAX_REPLAY_S // 86400} days; pick a part with {{trace_start}} and "
                "{trace_duration}", "trace_start", "trace_duration")
        return self._rows(lo, hi, self.offsets[lo:hi] - start_s)

    def scaled(self, speed: float) -> Trace:
        """The same rows with offsets divided by `speed`."""
        if not (math.isfinite(speed) and speed > 0):
            raise bad_setting("trace_speed", f"{speed!r}: expected a number > 0")
        return replace(self, offsets=self.offsets / speed)

    def _rows(self, lo: int, hi: int, offsets: np.ndarray) -> Trace:
        flat, starts = self.block_flat, self.block_starts
        if flat is not None and starts is not None:
            flat = flat[starts[lo] : starts[hi]]
            starts = starts[lo : hi + 1] - starts[lo]
        return replace(
            self,
            offsets=offsets,
            input_tokens=self.input_tokens[lo:hi],
            output_tokens=self.output_tokens[lo:hi],
            block_flat=flat,
            block_starts=starts,
        )


def read_trace(path: str | Path, fmt: str = "auto") -> Trace:
    """Read a trace file in `fmt` (one of `FORMATS`, or `auto`)."""
    name = str(path)
    if fmt != "auto" and fmt not in FORMATS:
        raise bad_setting("trace_format",
                          f"{fmt!r}: expected auto or one of {', '.join(FORMATS)}")
    lines = read_text(name, "trace").splitlines()
    first = next((line for line in lines if line.strip()), None)
    if first is None:
        raise DataFormatError(f"{name}: the trace is empty")
    if fmt == "auto":
        fmt = _detect(name, first)
    with gc_paused():
        if fmt == "mooncake":
            return _read_mooncake(name, lines)
        return _read_csv(name, lines, fmt)


def _detect(name: str, first: str) -> str:
    """The format a file's first line shows: JSON means Mooncake, else a CSV header."""
    if first.lstrip().startswith("{"):
        return "mooncake"
    header = {column.strip() for column in next(csv.reader([first]))}
    scores = {fmt: len(header & set(cols)) for fmt, cols in CSV_COLUMNS.items()}
    best = max(scores, key=lambda fmt: scores[fmt])
    if scores[best] == 0:
        known = "; ".join(f"{fmt}: {', '.join(cols)}" for fmt, cols in CSV_COLUMNS.items())
        raise DataFormatError(
            f"{name}:1: unknown trace format: header {first.strip()[:200]!r} is neither "
            f"Mooncake JSONL nor a CSV with the columns of {known}; "
            f"name the trace's format"
        )
    return best


class _Columns:
    """Growing columns with the checks every format shares (lengths >= 1, time order)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.times: list[float] = []
        self.inputs: list[int] = []
        self.outputs: list[int] = []

    def add(
        self, where: str, time_col: str, time: float, lengths: tuple[tuple[str, object], ...]
    ) -> None:
        """Append one row; `where` is `file:line`, `lengths` the (column, value) of in and out."""
        if self.times and time < self.times[-1]:
            raise DataFormatError(
                f"{where}: column {time_col!r}: timestamps go backwards ({time!r} after "
                f"{self.times[-1]!r}); a trace must be sorted by arrival"
            )
        if time < 0 or not math.isfinite(time):
            raise DataFormatError(f"{where}: column {time_col!r}: {time!r} is not a time >= 0")
        tokens_in, tokens_out = (_length(f"{where}: column {col!r}", v) for col, v in lengths)
        self.times.append(time)
        self.inputs.append(tokens_in)
        self.outputs.append(tokens_out)

    def trace(self, fmt: str, time_scale: float, **blocks: np.ndarray) -> Trace:
        if not self.times:
            raise DataFormatError(f"{self.name}: the trace has no requests")
        times = np.asarray(self.times, dtype=np.float64)
        return Trace(
            path=self.name,
            format=fmt,
            offsets=(times - times[0]) * time_scale,
            input_tokens=np.asarray(self.inputs, dtype=np.int64),
            output_tokens=np.asarray(self.outputs, dtype=np.int64),
            **blocks,
        )


def _length(where: str, value: object) -> int:
    """A token count >= 1 (ints, or integral numbers written as text or floats)."""
    try:
        number = float(value) if isinstance(value, str) else value
        if isinstance(number, bool) or not isinstance(number, int | float):
            raise ValueError
        if number != int(number):
            raise ValueError
    except (ValueError, TypeError, OverflowError):
        raise DataFormatError(f"{where}: {value!r} is not a whole number of tokens") from None
    if not 1 <= number <= MAX_TOKENS:
        raise DataFormatError(f"{where}: a length must be 1..{MAX_TOKENS} tokens, got {value!r}")
    return int(number)


def _read_mooncake(name: str, lines: list[str]) -> Trace:
    columns = _Columns(name)
    flat: list[int] = []
    starts = [0]
    for number, line in _numbered(lines):
        where = f"{name}:{number}"
        row = _json_row(where, line)
        missing = [key for key in MOONCAKE_KEYS if key not in row]
        if missing:
            raise DataFormatError(f"{where}: column {missing[0]!r} is missing (mooncake)")
        ids = _block_list(f"{where}: column 'hash_ids'", row["hash_ids"])
        columns.add(
            where,
            "timestamp",
            _number(f"{where}: column 'timestamp'", row["timestamp"]),
            (("input_length", row["input_length"]), ("output_length", row["output_length"])),
        )
        flat.extend(ids)
        starts.append(len(flat))
    return columns.trace(
        "mooncake",
        1e-3,
        block_flat=np.asarray(flat, dtype=np.int64),
        block_starts=np.asarray(starts, dtype=np.int64),
    )


def _json_row(where: str, line: str) -> dict[str, object]:
    row = json_line(where, line)
    if not isinstance(row, dict):
        raise DataFormatError(f"{where}: expected a JSON object, got {type(row).__name__}")
    return row


def _block_list(where: str, value: object) -> list[int]:
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value
    ):
        raise DataFormatError(f"{where}: expected a list of block ids (integers >= 0)")
    return value


def _number(where: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise DataFormatError(f"{where}: {value!r} is not a number")
    return float(value)


def _read_csv(name: str, lines: list[str], fmt: str) -> Trace:
    time_col, in_col, out_col = CSV_COLUMNS[fmt]
    rows = csv.reader(io.StringIO("\n".join(lines)))
    header = [column.strip() for column in next(rows)]
    for column in (time_col, in_col, out_col):
        if column not in header:
            raise DataFormatError(
                f"{name}:1: column {column!r} is missing ({fmt} needs "
                f"{', '.join(CSV_COLUMNS[fmt])}; the header has {', '.join(header)})"
            )
    t_i, in_i, out_i = (header.index(c) for c in (time_col, in_col, out_col))
    parse_time = _AzureClock() if fmt == "azure" else _seconds
    columns = _Columns(name)
    for number, row in _csv_rows(rows):
        where = f"{name}:{number}"
        if len(row) < len(header):
            raise DataFormatError(
                f"{where}: column {header[len(row)]!r} is missing (the row has {len(row)} of "
                f"{len(header)} fields)"
            )
        time = parse_time(f"{where}: column {time_col!r}", row[t_i].strip())
        columns.add(where, time_col, time, ((in_col, row[in_i]), (out_col, row[out_i])))
    return columns.trace(fmt, 1.0)


def _csv_rows(rows: Iterator[list[str]]) -> Iterator[tuple[int, list[str]]]:
    """Data rows with their 1-based line number (no quoted newlines in these formats)."""
    for index, row in enumerate(rows, start=2):
        if row and any(field.strip() for field in row):
            yield index, row


def _numbered(lines: list[str]) -> Iterator[tuple[int, str]]:
    for index, line in enumerate(lines, start=1):
        if line.strip():
            yield index, line


def _seconds(where: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise DataFormatError(f"{where}: {text!r} is not a number of seconds") from None


class _AzureClock:
    """Seconds of `2023-11-16 18:15:46.6805900` since the first row's whole second.

    Relative to the file's own first stamp (not 1970), so float64 keeps all 7 fractional
    digits; the timezone-less wall clock is read as UTC, as only differences matter.
    """

    def __init__(self) -> None:
        self._base: datetime | None = None

    def __call__(self, where: str, text: str) -> float:
        whole, _, fraction = text.partition(".")
        try:
            stamp = datetime.fromisoformat(whole).replace(tzinfo=None)
            if fraction and not fraction.isdigit():
                raise ValueError
        except ValueError:
            raise DataFormatError(
                f"{where}: {text!r} is not a time like 2023-11-16 18:15:46.6805900"
            ) from None
        if self._base is None:
            self._base = stamp
        seconds = (stamp - self._base).total_seconds()
        return seconds + (int(fraction) / 10 ** len(fraction) if fraction else 0.0)
