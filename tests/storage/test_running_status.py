"""One rule for a run.json that still says running: its writer still going keeps it running;
its writer gone (or not checkable) makes it incomplete with the level it stopped in
recomputed and marked partial; only a writer known gone is written back to disk."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.run_info import RunInfo
from servecap.core.summary import LevelSummary
from servecap.storage.run_dir import RecordWriter, write_run_info, write_summaries
from servecap.storage.runs import load_run, planned_requests

CONFIG = {"concurrency": [1, 2], "rounds": 2}


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=30)
    return proc.pid


def _run_dir(tmp_path: Path, **info: object) -> Path:
    """A run stopped inside c=2: c=1 finished (2 rows, its summary on disk), c=2 sent 1 of 4."""
    run_dir = tmp_path / "run"
    run_dir.mkdir(parents=True)
    write_run_info(run_dir, RunInfo(name="r", status="running", config=CONFIG, **info))
    writer = RecordWriter(run_dir / "requests.jsonl")
    for request_id, c in enumerate((1, 1, 2)):
        record = RequestRecord.for_level(LevelKey.closed(c), request_id, 0, 0)
        record.status, record.reason = "failed", "http_5xx"
        writer.write(record)
    writer.close()
    write_summaries(run_dir, [LevelSummary(concurrency=1, n_requests=2, partial=False)])
    return run_dir


def _levels(run_dir: Path) -> list[tuple[int | None, bool | None]]:
    return [(lv.concurrency, lv.partial) for lv in load_run(run_dir).levels]


def test_a_run_whose_writer_is_alive_stays_running(tmp_path: Path) -> None:
    run_dir = _run_dir(tmp_path, pid=os.getpid(), host=socket.gethostname())
    run = load_run(run_dir)
    assert run.info.status == "running"
    assert [lv.concurrency for lv in run.levels] == [1]  # its summaries as written so far


def test_a_run_whose_writer_is_gone_is_incomplete_on_disk_with_its_partial_level(
    tmp_path: Path,
) -> None:
    run_dir = _run_dir(tmp_path, pid=_dead_pid(), host=socket.gethostname())
    run = load_run(run_dir)
    assert run.info.status == "incomplete" and "killed" in (run.info.stop_reason or "")
    assert [(lv.concurrency, lv.partial) for lv in run.levels] == [(1, False), (2, True)]
    on_disk = json.loads((run_dir / "run.json").read_text())
    assert on_disk["status"] == "incomplete"
    stored = json.loads((run_dir / "summary.json").read_text())
    assert [(lv["concurrency"], lv["partial"]) for lv in stored] == [(1, False), (2, True)]
    assert _levels(run_dir) == [(1, False), (2, True)]  # the second load reads the same


def test_a_run_whose_writer_cannot_be_checked_is_incomplete_but_not_rewritten(
    tmp_path: Path,
) -> None:
    elsewhere = {"pid": 1, "host": "not-" + socket.gethostname()}
    for name, info in (("old", {}), ("elsewhere", elsewhere)):
        run_dir = _run_dir(tmp_path / name, **info)
        run = load_run(run_dir)
        assert run.info.status == "incomplete", name
        assert [(lv.concurrency, lv.partial) for lv in run.levels] == [(1, False), (2, True)]
        assert json.loads((run_dir / "run.json").read_text())["status"] == "running"


def test_planned_requests_follow_the_stored_plan_of_any_kind() -> None:
    closed = RunInfo(name="c", config=CONFIG)
    assert planned_requests(closed) == {LevelKey.closed(1): 2, LevelKey.closed(2): 4}
    fixed = RunInfo(name="f", config={"load": {"kind": "fixed", "schedules": [[0, 0.5], [0]]}})
    assert planned_requests(fixed) == {LevelKey("fixed", 1): 2, LevelKey("fixed", 2): 1}
    assert planned_requests(RunInfo(name="bare")) is None
    assert planned_requests(RunInfo(name="bad", config={"load": {"kind": "nope"}})) is None
