"""What travels between the parent and its workers: JSON messages, one a line.

JSON, not pickle: a record holds server text, and a worker's messages are read by the
parent as data. A level travels as its type's wire name (`LevelSpec.WIRE`, looked up in the
kinds' registry) and fields; a record as its
`requests.jsonl` row; a request just started as the few fields a row needs if the worker
dies before it ends (`skeleton`).

Messages from a worker: `hello` (pid, clock), `pong` (its clock), `s` (a request started),
`r` (a request ended: its row), `done` (a share ended: its health); to a worker: `ping`,
`level` (a share and its start time), `stop` (send no more), `cancel` (cancel in flight),
`exit`.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.kinds.base import LevelSpec
from servecap.kinds.registry import level_type

# The fields of a started request that its row needs should its worker die in flight.
SKELETON_FIELDS: tuple[str, ...] = (
    "request_id", "concurrency", "level", "stream_index", "scheduled_at", "warmup",
    "user", "conversation", "turn", "think_before_s", "input_tokens_sent", "max_tokens_sent",
    "admitted_at", "depth", "appended_tokens",
)


def encode(message: dict[str, Any]) -> bytes:
    """One message as a JSON line (no NaN: a record never holds one)."""
    return json.dumps(message, separators=(",", ":"), allow_nan=False).encode() + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    value = json.loads(line)
    if not isinstance(value, dict) or not isinstance(value.get("op"), str):
        raise ValueError("a worker message is a JSON object with an `op`")
    return value


def level_to_wire(level: LevelSpec) -> dict[str, Any]:
    data = {f.name: getattr(level, f.name) for f in dataclasses.fields(level)}
    data["key"] = str(level.key)
    for name, value in data.items():
        if isinstance(value, tuple):  # offsets and targets: JSON arrays
            data[name] = [list(v) if isinstance(v, tuple) else v for v in value]
    return {"type": level.WIRE, "fields": data}


def level_from_wire(data: dict[str, Any]) -> LevelSpec:
    cls = level_type(data["type"])
    fields = dict(data["fields"])
    fields["key"] = LevelKey.parse(fields["key"])
    for name, value in fields.items():
        if isinstance(value, list):
            fields[name] = tuple(tuple(v) if isinstance(v, list) else v for v in value)
    return cls(**fields)


def skeleton(record: RequestRecord) -> dict[str, Any]:
    """The fields of a request as it starts (`SKELETON_FIELDS`)."""
    return {name: getattr(record, name) for name in SKELETON_FIELDS}


_RECORD_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(RequestRecord))


def record_to_wire(record: RequestRecord) -> dict[str, Any]:
    """The row's fields as they are (no deep copy: it is encoded at once, on a hot path)."""
    return {name: getattr(record, name) for name in _RECORD_FIELDS}


def record_from_wire(data: dict[str, Any]) -> RequestRecord:
    return RequestRecord.from_dict(data)


# Every stamp of a row on the perf clock: what moves when a row changes clocks.
_STAMPS: tuple[str, ...] = (
    "scheduled_at", "sent_at", "first_byte_at", "first_token_at", "first_answer_at",
    "last_token_at", "ended_at", "admitted_at",
)


def shift_record(record: RequestRecord, delta_ns: int) -> None:
    """Move every stamp of `record` by `delta_ns` (a remote node's clock to the parent's);
    differences within the row, hence its TTFT, ITL and latency, stay exactly as measured."""
    for name in _STAMPS:
        value = getattr(record, name)
        if value is not None:
            setattr(record, name, value + delta_ns)
    record.chunk_at = [t + delta_ns for t in record.chunk_at]
