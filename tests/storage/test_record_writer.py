"""requests.jsonl rows: written in the loop's next turn (after the sends that were due), in
one batch a turn, each row whole; a failed write stops the run at the next row; a row holds
the record's own lists, not copies, and reads back equal."""

from __future__ import annotations

import asyncio
import errno
from pathlib import Path

import pytest

from servecap.core.records import RequestRecord
from servecap.storage.run_dir import RecordWriter, iter_records


def _record(i: int) -> RequestRecord:
    return RequestRecord(
        request_id=i, concurrency=4, stream_index=i, scheduled_at=10, sent_at=11,
        first_token_at=20, last_token_at=40, ended_at=41, chunk_at=[20, 30, 40],
        chunk_tokens=[1, 1, 1], completion_tokens=3, token_source="usage",
        server_timings={"prompt_ms": 1.5}, client_delay_ms=0.25,
    )


async def test_rows_are_written_after_the_turn_that_sank_them(tmp_path: Path) -> None:
    path = tmp_path / "requests.jsonl"
    writer = RecordWriter(path)
    writer.write(_record(0))
    writer.write(_record(1))
    assert path.read_bytes() == b""  # nothing yet: the turn's sends go first
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert [r.request_id for r in iter_records(path)] == [0, 1]
    writer.write(_record(2))
    writer.close()  # close writes what is pending
    assert [r for r in iter_records(path)] == [_record(0), _record(1), _record(2)]


def test_without_a_loop_a_row_is_written_at_once(tmp_path: Path) -> None:
    path = tmp_path / "requests.jsonl"
    writer = RecordWriter(path)
    writer.write(_record(5))
    assert [r.request_id for r in iter_records(path)] == [5]
    writer.close()


async def test_a_failed_write_is_raised_by_the_next_row(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    writer = RecordWriter(tmp_path / "requests.jsonl")

    def full(_: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writer._handle, "write", full)
    writer.write(_record(0))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    with pytest.raises(OSError, match="No space left"):
        writer.write(_record(1))
    monkeypatch.undo()
    writer.close()  # raised once: closing after the stop does not raise it again


def test_a_row_shares_the_records_lists_and_keeps_the_old_format() -> None:
    record = _record(0)
    row = record.to_dict()
    assert row["chunk_at"] is record.chunk_at  # no deep copy of every chunk stamp
    assert "level" not in row and "user" not in row  # closed-loop rows as they always were
    assert RequestRecord.from_dict(row) == record
