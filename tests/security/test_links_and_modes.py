"""Writers never follow a link they did not create, write whole files, and keep results
private (files 0600, directories 0700) whatever the umask."""

from __future__ import annotations

import errno
import json
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from servecap.storage import safe_files
from servecap.storage.safe_files import open_append, write_atomic
from tests.faults.runs import invoke, invoke_report, only_run_dir, run_args
from tests.servers.fault_server import FaultServer, FaultServerThread

REPORT_FILES = ("report.html", "report.md", "report.json", "results.zip")


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("links") / "out"
    old = os.umask(0)  # the loosest umask: modes must not depend on it
    try:
        with FaultServerThread(FaultServer()) as thread:
            ran = invoke(run_args(thread.base_url, out))
    finally:
        os.umask(old)
    assert ran.exit_code == 0, ran.stderr
    return out


def _modes(root: Path) -> Iterator[tuple[Path, int]]:
    for path in [root, *root.rglob("*")]:
        yield path, stat.S_IMODE(path.lstat().st_mode)


def test_run_files_are_private_under_umask_0(stored_run: Path) -> None:
    for path, mode in _modes(stored_run):
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))


@pytest.mark.slow
def test_report_replaces_planted_links_and_leaves_their_targets(
    stored_run: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep")
    report = tmp_path / "report"
    report.mkdir()
    for name in REPORT_FILES:
        (report / name).symlink_to(victim / "precious.txt")
    for name in ("charts", "tables"):
        (report / name).symlink_to(victim, target_is_directory=True)
    old = os.umask(0o077)
    try:
        result = invoke_report([str(stored_run), "--out", str(report)])
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.stderr or repr(result.exception)
    assert sorted(p.name for p in victim.iterdir()) == ["precious.txt"]
    assert (victim / "precious.txt").read_text() == "keep"
    for path, mode in list(_modes(report))[1:]:  # the directory itself is the user's
        assert not path.is_symlink(), path
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_show_of_a_killed_run_never_writes_through_a_link(
    stored_run: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "killed"
    run_dir.mkdir()
    source = only_run_dir(stored_run)
    for name in ("run.json", "requests.jsonl"):
        (run_dir / name).write_bytes((source / name).read_bytes())
    info = json.loads((run_dir / "run.json").read_text())
    info.update(status="running", pid=_dead_pid(), host=socket.gethostname())
    (run_dir / "run.json").write_text(json.dumps(info))
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    for name in ("summary.json.tmp", "summary.csv.tmp", "run.json.tmp", "summary.csv"):
        (run_dir / name).symlink_to(victim)
    shown = invoke(["show", str(run_dir)])
    assert shown.exit_code == 0, shown.stderr
    assert victim.read_text() == "keep"
    assert json.loads((run_dir / "run.json").read_text())["status"] == "incomplete"
    assert not (run_dir / "summary.csv").is_symlink()


class _FullDisk:
    """A file handle whose writes fail as a full disk does."""

    def __init__(self, handle: IO[bytes]) -> None:
        self._handle = handle

    def write(self, data: bytes) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    def __enter__(self) -> _FullDisk:
        return self

    def __exit__(self, *exc: object) -> None:
        self._handle.close()


def test_a_full_disk_leaves_the_old_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_atomic(tmp_path / "report.html", "<p>old report</p>")
    real_fdopen = os.fdopen
    monkeypatch.setattr(safe_files.os, "fdopen", lambda *a, **k: _FullDisk(real_fdopen(*a, **k)))
    with pytest.raises(OSError) as raised:
        write_atomic(path, "<p>new report</p>" * 1000)
    assert raised.value.errno == errno.ENOSPC
    assert path.read_text() == "<p>old report</p>"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_append_refuses_a_planted_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / "requests.jsonl").symlink_to(victim)
    with pytest.raises(OSError) as raised:
        open_append(tmp_path / "requests.jsonl")
    assert raised.value.errno == errno.ELOOP
    assert victim.read_text() == "keep"
