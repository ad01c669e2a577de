"""`servecap ui` is Streamlit itself (the process is replaced): SIGTERM to its pid stops it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.ui.test_browser import free_port, wait_healthy


def session_members(sid: int) -> list[int]:
    """Live processes of session `sid` (the ui was started in a new session)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[3]) == sid and fields[0] != "Z":  # fields[3]: session id
            members.append(int(entry.name))
    return members


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_sigterm_to_the_ui_pid_stops_streamlit_and_frees_the_port(tmp_path: Path) -> None:
    port = free_port()
    log = (tmp_path / "ui.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "servecap.cli.main", "ui", "--results", str(tmp_path / "r"),
         "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc)
        cmdline = Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")
        assert b"streamlit" in cmdline  # the same pid is Streamlit now: no parent to orphan it
        proc.send_signal(signal.SIGTERM)  # the pid only, as kill or systemd would
        assert proc.wait(timeout=30) is not None
        deadline = time.monotonic() + 10
        while session_members(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.2)  # poll
        assert session_members(proc.pid) == []
        with socket.socket() as sock:
            # free to serve on again (as a server binds: TIME_WAIT from the health checks
            # does not count, a listener still holding it would)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", port))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
