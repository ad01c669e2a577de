"""`servecap compare` stops as `run` does: a target gone for good ends the comparison after
`--outage-s` without a success, and a disk that fills mid-comparison ends it cleanly; both
exit 1 with one line, keep every row, and leave `comparison.json` and each target's
`run.json` incomplete with the reason."""

from __future__ import annotations

import errno
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from servecap.storage import run_dir as run_dir_module
from tests.faults.runs import CliResult, invoke, rows, run_info
from tests.servers import fault_server
from tests.servers.fault_server import FaultServer, FaultServerThread


def _compare(a_url: str, b_url: str, out: Path, *extra: str) -> CliResult:
    return invoke([
        "compare", "--target", f"a={a_url}", "--target", f"b={b_url}",
        "--concurrency", "1", "--repeats", "2", "--warmup", "0", "--output-tokens", "4",
        "--input-tokens", "8", "--out", str(out), *extra,
    ])


def _comparison(out: Path) -> tuple[Path, dict[str, Any]]:
    (comp_dir,) = [p for p in out.iterdir() if (p / "comparison.json").is_file()]
    return comp_dir, json.loads((comp_dir / "comparison.json").read_text())


def _last_line(result: CliResult) -> str:
    return [line for line in result.stderr.splitlines() if line.strip()][-1]


@pytest.mark.slow
def test_a_target_gone_for_good_stops_the_comparison(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = threading.Event()

    async def last_answer(request: web.Request) -> web.StreamResponse:
        gone.set()  # target b shuts down for good after this one
        return await fault_server.ok(request)

    monkeypatch.setitem(fault_server.FAULTS, "last_answer", last_answer)
    with FaultServerThread(FaultServer(default="ok")) as alive:
        dying = FaultServerThread(FaultServer(queue=["ok", "ok", "last_answer"],
                                              default="ok")).__enter__()
        closer = threading.Thread(target=lambda: (gone.wait(60), dying.__exit__()))
        closer.start()
        try:  # hours of load if nothing stopped it
            result = _compare(alive.base_url, dying.base_url, tmp_path / "out",
                              "--rounds", "100000", "--outage-s", "0.3")
        finally:
            gone.set()
            closer.join(30)
    assert result.exception is None, repr(result.exception)
    assert result.exit_code == 1, result.stderr
    assert _last_line(result).startswith("error: comparison stopped: target b: server gone")
    comp_dir, stored = _comparison(tmp_path / "out")
    assert stored["status"] == "incomplete" and "server gone" in stored["stop_reason"]
    dead = run_info(comp_dir / stored["targets"][1]["run_dir"])
    assert dead["status"] == "incomplete" and "server gone" in dead["stop_reason"]
    kept = rows(comp_dir / stored["targets"][1]["run_dir"])
    assert sum(r["status"] == "ok" for r in kept) >= 3  # what was measured is kept
    assert kept[-1]["status"] == "failed"


def test_a_full_disk_stops_the_comparison_cleanly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_write = run_dir_module.RecordWriter.write
    calls = {"n": 0}

    def write(self: run_dir_module.RecordWriter, record: object) -> None:
        calls["n"] += 1
        if calls["n"] > 5:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(self, record)  # type: ignore[arg-type]

    monkeypatch.setattr(run_dir_module.RecordWriter, "write", write)
    with FaultServerThread(FaultServer(default="ok")) as a, \
            FaultServerThread(FaultServer(default="ok")) as b:
        result = _compare(a.base_url, b.base_url, tmp_path / "out", "--rounds", "20")
    assert result.exception is None, repr(result.exception)
    assert result.exit_code == 1, result.stderr
    last = _last_line(result)
    assert last.startswith("error: comparison stopped: cannot write results"), result.stderr
    assert "No space left" in last and "Traceback" not in result.stderr
    comp_dir, stored = _comparison(tmp_path / "out")
    assert stored["status"] == "incomplete" and "write failed" in stored["stop_reason"]
    assert not stored["headlines"]  # no statistics from a comparison that did not finish
    written = [rows(comp_dir / t["run_dir"]) for t in stored["targets"]]
    assert sum(map(len, written)) == 5
    for target in stored["targets"]:
        info = run_info(comp_dir / target["run_dir"])
        assert info["status"] == "incomplete"
    assert not (comp_dir / ".servecap-reserve").exists()
