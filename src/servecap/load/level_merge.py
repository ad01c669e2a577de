"""The parent's side of one level run by workers: rows in, one stream of rows out.

Every message a worker sends about the level comes here: a request started (kept as in
flight), a request ended (its row gets the run's next request id and its stream index in
the whole level, then goes to the level's sink, as rows of one process do), a share done
(its health), or the worker gone (its requests in flight become rows marked
`worker_died`, cancelled, so nothing that was sent is lost from `requests.jsonl`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from servecap.core.records import RequestRecord
from servecap.kinds.io import LevelIO
from servecap.load.worker_wire import record_from_wire, shift_record

WORKER_DIED = "worker_died"


@dataclass
class _Part:
    stream_offset: int
    clock_offset_ns: int  # the worker's clock minus the parent's
    in_flight: dict[int, tuple[int, dict[str, Any]]] = field(default_factory=dict)
    done: bool = False
    health: dict[str, Any] = field(default_factory=dict)
    requests: int = 0
    died: str | None = None
    error: str | None = None


class LevelMerge:
    """Merges one level's rows from its workers (`parts`: worker -> stream offset, clock)."""

    def __init__(self, io: LevelIO, parts: dict[int, tuple[int, int]]) -> None:
        self.io = io
        self.parts = {k: _Part(offset, clock) for k, (offset, clock) in parts.items()}
        self.finished = asyncio.Event()
        self.failure: BaseException | None = None
        if not self.parts:
            self.finished.set()

    def on_message(self, worker: int, message: dict[str, Any]) -> None:
        part = self.parts.get(worker)
        if part is None or part.done:
            return
        try:
            self._handle(part, message)
        except Exception as exc:  # a failing sink (full disk): the level stops with it
            self.failure = exc
            self.finished.set()

    def _handle(self, part: _Part, message: dict[str, Any]) -> None:
        op = message["op"]
        if op == "s":
            rec = message["rec"]
            part.in_flight[rec["request_id"]] = (next(self.io.ids), rec)
        elif op == "r":
            record = record_from_wire(message["rec"])
            run_id, _ = part.in_flight.pop(record.request_id, (None, None))
            self._sink(part, record, run_id)
        elif op == "done":
            part.health = dict(message.get("health") or {})
            part.error = message.get("error")
            self._close(part)

    def on_death(self, worker: int, why: str) -> None:
        """Worker `worker` is gone: its requests in flight are rows marked `worker_died`."""
        part = self.parts.get(worker)
        if part is None or part.done:
            return
        part.died = why
        for run_id, rec in list(part.in_flight.values()):
            record = RequestRecord.from_dict(rec)
            record.status, record.reason = "cancelled", WORKER_DIED
            record.detail = f"worker {worker} {why} with this request in flight"
            try:
                self._sink(part, record, run_id)
            except Exception as exc:
                self.failure = exc
        part.in_flight.clear()
        self._close(part)

    def _sink(self, part: _Part, record: RequestRecord, run_id: int | None) -> None:
        record.request_id = run_id if run_id is not None else next(self.io.ids)
        record.stream_index += part.stream_offset
        if part.clock_offset_ns:
            shift_record(record, -part.clock_offset_ns)
        part.requests += 1
        self.io.sink(record)

    def _close(self, part: _Part) -> None:
        part.done = True
        if all(p.done for p in self.parts.values()):
            self.finished.set()

    def fields(self) -> dict[str, Any]:
        """The level's worker columns: how many ran, each one's health, which were
        client-bound (any of them flags the level) and which died."""
        health = []
        for k, part in sorted(self.parts.items()):
            row = {"worker": k, "requests": part.requests, **part.health}
            if part.died:
                row["died"] = part.died
            if part.error and part.error != "cancelled":
                row["error"] = part.error
            health.append(row)
        bound = [row["worker"] for row in health if row.get("client_bound")]
        fields: dict[str, Any] = {"workers": len(health), "worker_health": health,
                                  "workers_client_bound": bound,
                                  "workers_died": [r["worker"] for r in health if "died" in r]}
        lags = [r["loop_lag_p99_ms"] for r in health if "loop_lag_p99_ms" in r]
        cpus = [r["client_cpu_pct"] for r in health if "client_cpu_pct" in r]
        if lags:
            fields["loop_lag_p99_ms"] = max(lags)
        if cpus:
            fields["client_cpu_pct"] = max(cpus)
        fields["client_bound"] = bool(bound)
        return fields
