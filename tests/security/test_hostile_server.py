"""A hostile server: model ids and server info that try to escape the output directory,
inject spreadsheet formulas or script into reports; and result file permissions."""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.faults.runs import invoke, invoke_report, only_run_dir, run_args
from tests.servers.fault_server import FaultServer, FaultServerThread

pytestmark = pytest.mark.slow  # each case runs a sweep and builds a report

SCRIPT = "<script>alert(1)</script>"
HOSTILE_VERSION = {"version": f"</script><img src=x onerror=alert(2)>{SCRIPT}",
                   "engine": "=HYPERLINK(\"http://evil\")", "build": "@SUM(1+1)",
                   "link": "javascript:alert(3)"}


def _files(root: Path) -> Iterator[Path]:
    return (p for p in root.rglob("*") if p.is_file())


def _run_and_report(model: str, tmp_path: Path) -> tuple[Path, Path]:
    server = FaultServer(queue=["ok", "http_500", "ok"], models=[model],
                         version=HOSTILE_VERSION)
    out, report = tmp_path / "work" / "out", tmp_path / "work" / "report"
    with FaultServerThread(server) as thread:
        ran = invoke(run_args(thread.base_url, out))
    assert ran.exit_code == 0, ran.stderr
    reported = invoke_report([str(out), "--out", str(report)])
    assert reported.exit_code == 0, reported.stderr or repr(reported.exception)
    return out, report


@pytest.mark.parametrize("model", ["../../etc/x", "/etc/passwd", "..", "a/../../b\\..\\c"])
def test_model_id_cannot_escape_output_dir(model: str, tmp_path: Path) -> None:
    out, report = _run_and_report(model, tmp_path)
    run_dir = only_run_dir(out)
    assert run_dir.parent == out and ".." not in run_dir.name and "/" not in run_dir.name
    for path in [*_files(tmp_path)]:
        resolved = path.resolve()
        assert resolved.is_relative_to(out.resolve()) or resolved.is_relative_to(
            report.resolve()), path
    assert not (tmp_path / "etc").exists()


def _csv_cells(root: Path) -> Iterator[tuple[Path, str]]:
    for path in _files(root):
        if path.suffix == ".csv":
            with path.open(newline="", encoding="utf-8") as handle:
                for row in csv.reader(handle):
                    for cell in row:
                        yield path, cell


NUMBER = re.compile(r"^-(\d|inf|nan)", re.IGNORECASE)


def test_csv_cells_neutralised_and_html_inert(tmp_path: Path) -> None:
    model = '=cmd|" /C calc"!A0'
    _, report = _run_and_report(model, tmp_path)
    cells = list(_csv_cells(tmp_path / "work"))
    assert cells
    for path, cell in cells:
        assert not cell.startswith(("=", "+", "@", "\t", "\r")), (path, cell)
        assert not (cell.startswith("-") and not NUMBER.match(cell)), (path, cell)
    for path in _files(report):
        if path.suffix in (".html", ".htm"):
            text = path.read_text(encoding="utf-8")
            assert SCRIPT not in text and "<img src=x" not in text, path  # escaped is fine
            assert 'href="javascript:' not in text.lower(), path


def test_script_model_id_inert_in_html_and_markdown(tmp_path: Path) -> None:
    _, report = _run_and_report(SCRIPT, tmp_path)
    for path in _files(report):
        if path.suffix in (".html", ".md"):
            text = path.read_text(encoding="utf-8")
            assert SCRIPT not in text, path


def _world_writable(root: Path) -> list[str]:
    return [f"{p} {oct(p.stat().st_mode)}" for p in [root, *root.rglob("*")]
            if p.stat().st_mode & 0o002]


def _under_umask_0(tmp_path: Path) -> tuple[Path, Path]:
    old = os.umask(0)
    try:
        return _run_and_report("plain-model", tmp_path)
    finally:
        os.umask(old)


def test_run_files_not_world_writable(tmp_path: Path) -> None:
    out, _ = _under_umask_0(tmp_path)
    assert _world_writable(out) == []


def test_report_files_not_world_writable(tmp_path: Path) -> None:
    _, report = _under_umask_0(tmp_path)
    assert _world_writable(report) == []
