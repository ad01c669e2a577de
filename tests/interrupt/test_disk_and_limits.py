"""The output directory and the process's limits: refuse before load, or stop cleanly."""

from __future__ import annotations

import errno
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from servecap.storage import run_dir as run_dir_module
from tests.faults.runs import invoke, only_run_dir, rows, run_args, run_info
from tests.interrupt.proc import SERVECAP
from tests.servers.fault_server import FaultServer, FaultServerThread


def _single_error(stderr: str, needle: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    assert needle in lines[0], stderr


@pytest.mark.parametrize("where", ["under_a_file", "is_a_file", "dev_full"])
def test_unwritable_output_dir_refused_before_load(where: str, tmp_path: Path) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a regular file\n")
    out = {"under_a_file": blocker / "results", "is_a_file": blocker,
           "dev_full": Path("/dev/full")}[where]
    server = FaultServer()
    with FaultServerThread(server) as thread:
        result = invoke(run_args(thread.base_url, out))
    assert result.exit_code == 2, result.stderr
    _single_error(result.stderr, "output directory")
    assert server.completions == 0


def test_disk_full_mid_run_stops_and_keeps_rows(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = run_dir_module.RecordWriter.write
    calls = {"n": 0}

    def write(self: run_dir_module.RecordWriter, record: object) -> None:
        calls["n"] += 1
        if calls["n"] > 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(self, record)  # type: ignore[arg-type]

    monkeypatch.setattr(run_dir_module.RecordWriter, "write", write)
    with FaultServerThread(FaultServer()) as thread:
        args = run_args(thread.base_url, tmp_path / "out")
        args[args.index("--rounds") + 1] = "20"
        result = invoke(args)
    assert result.exception is None, repr(result.exception)
    assert result.exit_code == 1, result.stderr
    last = [line for line in result.stderr.splitlines() if line.strip()][-1]
    assert last.startswith("error: run stopped") and "No space left" in last, result.stderr
    assert "Traceback" not in result.stderr
    run_dir = only_run_dir(tmp_path / "out")
    assert len(rows(run_dir)) == 2
    info = run_info(run_dir)
    assert info["status"] == "incomplete" and "write failed" in info["stop_reason"]


def _limited(soft: int, hard: int) -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.slow
def test_concurrency_above_hard_file_limit_refused(tmp_path: Path) -> None:
    server = FaultServer()
    with FaultServerThread(server) as thread:
        proc = subprocess.run(
            [*SERVECAP, *run_args(thread.base_url, tmp_path / "out", "--concurrency", "2000")],
            capture_output=True, text=True, timeout=60, preexec_fn=lambda: _limited(256, 256),
        )
    assert proc.returncode == 2, proc.stderr
    _single_error(proc.stderr, "open files")
    assert server.completions == 0


@pytest.mark.slow
def test_soft_file_limit_raised_to_fit() -> None:
    code = (
        "import resource\n"
        "from servecap.api.run.preflight import ensure_file_limit\n"
        "ensure_file_limit(1000)\n"
        "print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, preexec_fn=lambda: _limited(256, 4096))
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) >= 1000


class _FillingDisk:
    """`requests.jsonl` on a disk that fills after `room` rows: every later write (the
    close's included) fails as a full disk does."""

    def __init__(self, handle: Any, room: int) -> None:
        self.handle, self.room = handle, room
        self.closed = False

    def write(self, data: bytes) -> int:
        if self.room <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.room -= data.count(b"\n")
        return int(self.handle.write(data))

    def close(self) -> None:
        self.closed = True
        self.handle.close()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_disk_that_fills_mid_run_stops_it_cleanly(
    workers: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write error and the close's second one: one message, exit 1, status and
    summary saved and printed, and `show` names the cause (not "killed")."""
    real_open = run_dir_module.open_append
    monkeypatch.setattr(run_dir_module, "open_append",
                        lambda path, buffered=True: _FillingDisk(real_open(path, buffered), 2))
    with FaultServerThread(FaultServer()) as thread:
        args = run_args(thread.base_url, tmp_path / "out", "--workers", workers)
        args[args.index("--rounds") + 1] = "20"
        result = invoke(args)
    assert result.exception is None, repr(result.exception)
    assert result.exit_code == 1, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1 and "No space left" in errors[0], result.stderr
    assert "Traceback" not in result.stderr and "(incomplete)" in result.stdout
    run_dir = only_run_dir(tmp_path / "out")
    info = run_info(run_dir)
    assert info["status"] == "incomplete" and "write failed" in info["stop_reason"]
    assert (run_dir / "summary.json").is_file() and not (run_dir / ".servecap-reserve").exists()
    shown = invoke(["show", str(run_dir), "--format", "json"])
    assert shown.exit_code == 0 and "killed" not in shown.stdout, shown.stdout


def _mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                               str(where)], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def test_a_real_disk_that_fills_mid_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 20 MiB tmpfs filled to the last byte by the server's third answer: rows stop with
    ENOSPC, and the reserve lets the final run.json and summaries through."""
    from aiohttp import web

    from tests.servers import fault_server

    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "20m"):
        pytest.skip("cannot mount a tmpfs here (needs mount rights)")
    try:
        async def fill_then_answer(request: web.Request) -> web.StreamResponse:
            with (disk / "filler").open("ab") as filler:
                try:
                    while True:
                        filler.write(b"\0" * 65536)
                        filler.flush()
                except OSError:
                    pass  # the disk is full
            return await fault_server.ok(request)

        monkeypatch.setitem(fault_server.FAULTS, "fill", fill_then_answer)
        with FaultServerThread(FaultServer(queue=["ok", "ok", "fill"])) as thread:
            args = run_args(thread.base_url, disk / "out")
            args[args.index("--rounds") + 1] = "30"
            result = invoke(args)
        assert result.exception is None, repr(result.exception)
        assert result.exit_code == 1, result.stderr
        assert "No space left" in result.stderr and "Traceback" not in result.stderr
        run_dir = only_run_dir(disk / "out")
        info = run_info(run_dir)
        assert info["status"] == "incomplete" and "write failed" in info["stop_reason"]
        assert len(rows(run_dir)) >= 2 and (run_dir / "summary.json").is_file()
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True, timeout=30)
