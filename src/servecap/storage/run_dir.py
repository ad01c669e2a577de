"""Reading and writing one run directory.

Layout: `run.json` (RunInfo), `requests.jsonl` (one RequestRecord a line, appended as each
request ends), `summary.json` and `summary.csv` (one LevelSummary a level). A run killed
mid-write leaves at most one torn last line in `requests.jsonl`; readers skip it.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import orjson
from pydantic import ValidationError

from servecap.core import json_input
from servecap.core.errors import DataFormatError, UserInputError
from servecap.core.level_key import LevelKey, key_fields, key_from_fields
from servecap.core.records import RequestRecord
from servecap.core.run_info import RunInfo
from servecap.core.summary import LevelSummary, summary_columns
from servecap.core.validation import first_problem
from servecap.kinds.registry import kind_of
from servecap.storage.safe_files import (
    DIR_MODE,
    neutralise_cell,
    open_append,
    read_text_file,
    safe_name,
    write_atomic,
)

RUN_FILE = "run.json"
REQUESTS_FILE = "requests.jsonl"
SUMMARY_JSON = "summary.json"
SUMMARY_CSV = "summary.csv"


@dataclass
class Run:
    """A run as stored: its metadata, its level summaries and where its records are."""

    path: Path
    info: RunInfo
    levels: list[LevelSummary]

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def has_records(self) -> bool:
        return (self.path / REQUESTS_FILE).is_file()

    def iter_records(self) -> Iterator[RequestRecord]:
        return iter_records(self.path / REQUESTS_FILE)


def new_run_dir(out_dir: Path, name: str) -> Path:
    """Create a fresh, uniquely named run directory under `out_dir`."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    base = f"{safe_name(name)}-{stamp}"
    try:
        out_dir.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
        for suffix in ("", *(f"-{i}" for i in range(1, 1000))):
            candidate = out_dir / f"{base}{suffix}"
            try:
                candidate.mkdir(mode=DIR_MODE)  # fails on anything there, a link included
            except FileExistsError:
                continue
            return candidate
    except OSError as exc:
        raise UserInputError(f"cannot create a run directory in {out_dir}: {exc}") from exc
    raise UserInputError(f"too many runs named {base!r} in {out_dir}")


def write_run_info(run_dir: Path, info: RunInfo) -> None:
    write_atomic(run_dir / RUN_FILE, info.model_dump_json(indent=2) + "\n")


def write_summaries(run_dir: Path, levels: list[LevelSummary]) -> None:
    """Write `summary.json` and `summary.csv` (CSV cells neutralised against formulas)."""
    rows = [level.stored() for level in levels]
    write_atomic(run_dir / SUMMARY_JSON, json.dumps(rows, indent=2) + "\n")
    text = io.StringIO(newline="")
    # extrasaction: JSON-only fields (bootstrap intervals) are not CSV columns.
    writer = csv.DictWriter(text, fieldnames=summary_columns(levels), extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: neutralise_cell(_csv_value(v)) for k, v in row.items()})
    write_atomic(run_dir / SUMMARY_CSV, text.getvalue())


def _csv_value(value: Any) -> Any:
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True) if value else ""
    if isinstance(value, list):
        return "; ".join(str(v) for v in value)
    return "" if value is None else value


class RecordWriter:
    """Appends records to `requests.jsonl`, one line each, flushed as it goes.

    On an event loop a record is written in a callback of the loop's next turn, with the
    others of its turn, not inside the sink: in a closed loop's burst (all c streams end at
    once) every stream's next request goes out first, and the rows follow (DESIGN: a send
    that is due goes first). Each batch is flushed to the OS when written, so a killed
    process loses at most the rows of the turn it died in; a crash mid-line leaves one torn
    line that `iter_records` skips. A failed write (a full disk) is raised by the next
    `write` or by `close`, so the run stops as it did when rows were written in the sink.
    The file is unbuffered: what a failed write did not get onto the disk is kept, byte
    exact, and written by the next `flush` (after the run frees its reserve), so a row is
    neither lost nor written twice.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[bytes] = open_append(path, buffered=False)
        self._unwritten = b""
        self._pending: list[RequestRecord] = []
        self._scheduled = False
        self._error: OSError | None = None

    def write(self, record: RequestRecord) -> None:
        self._raise_error()
        self._pending.append(record)
        if self._scheduled:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop: write now
            self.flush()
            return
        loop.call_soon(self._flush_soon)
        self._scheduled = True

    def flush(self) -> None:
        """Write every pending record now (one write for the batch)."""
        pending, self._pending = self._pending, []
        data = self._unwritten + b"".join(
            orjson.dumps(r.to_dict(), option=orjson.OPT_APPEND_NEWLINE) for r in pending
        )
        while data:
            try:
                written = self._handle.write(data) or 0
            except OSError:
                self._unwritten = data
                raise
            data = data[written:]
        self._unwritten = b""

    def _flush_soon(self) -> None:
        self._scheduled = False
        if self._handle.closed:
            return
        try:
            self.flush()
        except OSError as exc:
            self._error = exc

    def close(self) -> None:
        """Write what is left and close; the first failure is raised once, after closing."""
        if self._handle.closed:
            return
        try:
            self.flush()
        except OSError as exc:
            self._error = self._error or exc
        finally:
            self._handle.close()
        self._raise_error()

    def _raise_error(self) -> None:
        """A deferred write's failure, raised once (the run stops on it)."""
        error, self._error = self._error, None
        if error is not None:
            raise error


def iter_records(path: Path, skipped: list[int] | None = None) -> Iterator[RequestRecord]:
    """Records from a JSONL file; a torn or unreadable line is skipped, not fatal, and its
    line number appended to `skipped` (where given) so a reader can say rows were dropped."""
    if not path.is_file():
        return
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                data = json_input.loads(raw, max_depth=None)  # rows are checked flat
                if isinstance(data, dict) and _plausible_record(data):
                    yield RequestRecord.from_dict(data)
                    continue
            except (ValueError, TypeError, RecursionError):
                pass
            if skipped is not None and raw.strip():
                skipped.append(number)


_INT_FIELDS = ("request_id", "concurrency", "stream_index", "scheduled_at")
_OPTIONAL_INT_FIELDS = (
    "sent_at", "first_byte_at", "first_token_at", "first_answer_at", "last_token_at",
    "ended_at", "prompt_tokens", "completion_tokens", "http_status",
)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _names_a_level(data: dict[str, Any]) -> bool:
    """A row some level can hold: a `level` key of a known kind (such rows store
    `concurrency` 0), else a concurrency c >= 1 (the format from before keys existed)."""
    level = data.get("level")
    if level is not None and not isinstance(level, str):
        return False
    try:
        key = key_from_fields(data["concurrency"], level)
        kind_of(key)
    except ValueError:
        return False
    return "concurrency" not in key_fields(key) or key.value >= 1


def _plausible_record(data: dict[str, Any]) -> bool:
    """A stored row has the types metrics rely on; anything else is skipped like a torn line."""
    if not all(_is_int(data.get(name)) for name in _INT_FIELDS):
        return False
    if not _names_a_level(data):
        return False
    if not all(data.get(name) is None or _is_int(data[name]) for name in _OPTIONAL_INT_FIELDS):
        return False
    for name in ("chunk_at", "chunk_tokens"):
        values = data.get(name, [])
        if not isinstance(values, list) or not all(_is_int(v) for v in values):
            return False
    if not _plausible_level(data.get("level")):
        return False
    if not _in_time_order(data):
        return False
    return data.get("status", "ok") in ("ok", "failed", "cancelled")


# Each stamp, where present, comes no earlier than the one it follows (a negative gap would
# be a negative TTFT that passes any SLO).
_TIME_ORDER = (
    ("sent_at", "first_byte_at"), ("sent_at", "first_token_at"),
    ("first_token_at", "last_token_at"), ("sent_at", "ended_at"),
    ("first_token_at", "ended_at"),
)


def _in_time_order(data: dict[str, Any]) -> bool:
    if any(data.get(name) is not None and data[name] < 0
           for name in (*_INT_FIELDS, *_OPTIONAL_INT_FIELDS)):
        return False  # stamps and counts are >= 0; a negative one is no measurement
    return all(data.get(a) is None or data.get(b) is None or data[b] >= data[a]
               for a, b in _TIME_ORDER)


def _plausible_level(level: object) -> bool:
    if level is None:
        return True
    if not isinstance(level, str):
        return False
    try:
        LevelKey.parse(level)
    except ValueError:
        return False
    return True


def is_run_dir(path: Path) -> bool:
    return (path / RUN_FILE).is_file()


def find_run_dirs(path: Path) -> list[Path]:
    """`path` itself if it is a run, else the runs directly inside it, sorted by name."""
    if path.is_file() and path.name == RUN_FILE:
        return [path.parent]
    if is_run_dir(path):
        return [path]
    if not path.is_dir():
        raise UserInputError(f"no such run or directory: {path}")
    return sorted(child for child in path.iterdir() if is_run_dir(child))


def load_run_info(run_dir: Path) -> RunInfo:
    text = read_text_file(run_dir / RUN_FILE, "run file")
    try:
        return RunInfo.model_validate_json(text)
    except ValidationError as exc:
        raise DataFormatError(
            f"{run_dir / RUN_FILE} is not a valid run file: {first_problem(exc)}"
        ) from exc


def load_summaries(run_dir: Path) -> list[LevelSummary] | None:
    path = run_dir / SUMMARY_JSON
    if not path.is_file():
        return None
    text = read_text_file(path, "summary file", limit=256 * 1024 * 1024)
    try:
        rows = json_input.loads(text, max_depth=16)
        if not isinstance(rows, list):
            raise DataFormatError(f"{path} must hold a JSON list of levels")
        return [LevelSummary.model_validate(row) for row in rows]
    except ValidationError as exc:
        raise DataFormatError(f"{path} is not a valid summary: {first_problem(exc)}") from exc
    except (ValueError, RecursionError) as exc:
        problem = "nested too deeply" if isinstance(exc, RecursionError) else exc
        raise DataFormatError(f"{path} is not a valid summary: {problem}") from exc
