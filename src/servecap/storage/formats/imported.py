"""The common shape every foreign result file is read into, and the checks readers share.

A reader turns one file (or folder) of another tool into an `ImportedRun`: the tool, its
version, its levels (each a `LevelKey` with servecap request records, or with a summary
where the file holds only aggregates) and every field that could not be mapped or whose
definition differs from servecap's. `storage.formats.store` writes it as a run directory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servecap.core.errors import DataFormatError
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary
from servecap.kinds.registry import load_from_text

NS_PER_S = 1_000_000_000
NS_PER_MS = 1_000_000


@dataclass
class ImportedLevel:
    """One level of a foreign run: its records (per-request files) or its summary."""

    key: LevelKey
    records: list[RequestRecord] = field(default_factory=list)
    summary: LevelSummary | None = None
    # Summary fields the file states for the level where its records cannot give them
    # (a file without send times has no wall time: its own duration stands in, said so).
    overrides: dict[str, Any] = field(default_factory=dict)


@dataclass
class ImportedRun:
    """What one foreign file holds, in servecap's terms."""

    name: str
    tool: str
    tool_version: str
    format: str
    files: list[str]
    levels: list[ImportedLevel]
    # "their field: why it is not mapped / how its definition differs"
    unmapped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def per_request(self) -> bool:
        return bool(self.levels) and all(level.records for level in self.levels)


def concurrency_key(value: float) -> LevelKey:
    """The key of a fixed-concurrency level, from the kinds' own text form (`c=N`), so no
    code here names a kind."""
    return _key(f"c={int(value)}")


def rate_key(value: float) -> LevelKey:
    """The key of a fixed-rate level (`rate=R`, requests/s), from the kinds' text form."""
    return _key(f"rate={value:g}")


def _key(text: str) -> LevelKey:
    levels = load_from_text(text).levels()
    return levels[0].key


def need(data: Any, path: Path, dotted: str) -> Any:
    """`data[a][b]...` for `dotted` "a.b...", or exit 2 naming the file and the field."""
    node = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise DataFormatError(f"{path}: missing field {dotted!r}")
        node = node[part]
    return node


def number(value: Any, path: Path, name: str, allow_none: bool = False) -> float | None:
    """A finite, non-negative number, or exit 2 naming the file and the field."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise DataFormatError(f"{path}: field {name!r} is {value!r}, not a finite number")
    if value < 0:
        raise DataFormatError(f"{path}: field {name!r} is {value!r}, a negative measurement")
    return float(value)


def check_version(path: Path, tool: str, seen: object, supported: tuple[str, ...]) -> None:
    """Refuse a schema version this reader was not written for (newer fields may mean
    something else), naming what was seen and what is known."""
    if str(seen) not in supported:
        raise DataFormatError(
            f"{path}: {tool} schema version {seen!r} is not supported "
            f"(supported: {', '.join(supported)})"
        )


def chunk_record(
    key: LevelKey, request_id: int, start_ns: int, ttft_ns: int, gaps_ns: list[int],
    end_ns: int | None, tokens: tuple[int | None, int], from_usage: bool,
) -> RequestRecord:
    """A successful request from a start stamp, its TTFT and the gaps between its
    token-bearing chunks: `chunk_at` is rebuilt so servecap's own ITL, chunk gaps and TPS
    follow (`tokens` is (prompt, output)). Without `end_ns` the stream ends at its last
    chunk."""
    first = start_ns + ttft_ns
    chunk_at = [first]
    for gap in gaps_ns:
        chunk_at.append(chunk_at[-1] + gap)
    record = RequestRecord.for_level(key, request_id, request_id, start_ns)
    record.sent_at = start_ns
    record.first_token_at = first
    record.chunk_at = chunk_at
    record.last_token_at = chunk_at[-1]
    record.ended_at = max(end_ns if end_ns is not None else chunk_at[-1], chunk_at[-1])
    record.prompt_tokens, record.completion_tokens = tokens
    record.token_source = "usage" if from_usage else "estimated"
    return record


def failed_record(key: LevelKey, request_id: int, start_ns: int, end_ns: int,
                  detail: str) -> RequestRecord:
    """A failed request as servecap keeps one: a row with its reason, in the error rate."""
    record = RequestRecord.for_level(key, request_id, request_id, start_ns)
    record.sent_at = start_ns
    record.ended_at = max(end_ns, start_ns)
    record.status = "failed"
    record.reason = "client_error"
    record.detail = detail[:200]
    return record
