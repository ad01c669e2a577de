"""What a user's terminal shows: the demo's ending under a real pty, tables at 80 columns.

The demo runs for real (four simulators, tiny sweeps) on an 80-column pseudo-terminal and
its bytes go through a terminal emulator (pyte), so cursor moves and redraws land where a
terminal puts them: the screen at the end is what the user reads.
"""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from rich.console import Console

from servecap.cli.tables import levels_table, plain_text, print_table
from servecap.core.summary import LevelSummary

COLUMNS, LINES = 80, 400
BAR = "━"


def _run_on_pty(args: list[str], timeout_s: float) -> tuple[int, bytes]:
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    env = {**os.environ, "COLUMNS": str(COLUMNS), "LINES": str(LINES), "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen(args, stdin=follower, stdout=follower, stderr=follower, env=env,
                            close_fds=True)
    os.close(follower)
    out = bytearray()
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
        return proc.wait(timeout=30), bytes(out)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)


def _screen(raw: bytes) -> list[str]:
    pyte = pytest.importorskip("pyte")
    screen = pyte.Screen(COLUMNS, LINES)
    stream = pyte.ByteStream(screen)
    stream.feed(raw.replace(b"\n", b"\r\n"))
    lines = [line.rstrip() for line in screen.display]
    while lines and not lines[-1]:
        lines.pop()
    return lines


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_demo_ending_on_an_80_column_terminal(tmp_path: Path) -> None:
    args = [sys.executable, "-m", "servecap.cli.main", "demo", "--full",
            "--out", str(tmp_path / "d"), "--concurrency", "1,2", "--rounds", "1",
            "--verify-s", "5"]
    code, raw = _run_on_pty(args, timeout_s=200)
    lines = _screen(raw)
    (tmp_path / "screen.txt").write_text("\n".join(lines))
    text = "\n".join(lines)
    assert code == 0, text[-3000:]
    # a table's title: "vllm-direct: C_max 32, users 435 predicted, ..." (it may wrap)
    tables = [i for i, line in enumerate(lines) if re.match(r"[\w-]+: C_max ", line)]
    assert len(tables) == 4, text
    # one live display, stopped before the tables: no bar is drawn from there on
    assert not any(BAR in line for line in lines[tables[0]:]), text
    # every table is whole: header plus one row per level, numbers never cut
    for start in tables:
        header = next(i for i in range(start, start + 4) if lines[i].split()[:2] == ["c", "TTFT"])
        rows = [line.split() for line in lines[header + 2:header + 4]]
        assert [row[0] for row in rows] == ["1", "2"], text
        assert all(float(row[1]) > 0 and float(row[3]) > 0 for row in rows), text
    assert "…" not in text
    # after the tables: the seed's pairs with intervals, then the winner's verification
    pairs = [i for i, line in enumerate(lines) if line.endswith((
        "vllm-spec vs vllm-direct:", "sglang-spec vs sglang-direct:",
        "vllm-direct vs sglang-direct:"))]
    assert len(pairs) == 3 and pairs[0] > tables[-1], text
    assert "95% CI" in lines[pairs[0] + 1] + lines[pairs[0] + 2], text
    verified = next(i for i, line in enumerate(lines) if line.startswith("Verification of "))
    assert verified > pairs[-1] and "x1 real time" in lines[verified] + lines[verified + 1]
    # planned after the verification: the winner's table and the decision say what it found
    winner = " ".join(lines[verified:verified + 2]).split("Verification of ")[1].split()[0]
    (at,) = [i for i in tables if lines[i].startswith(f"{winner}: ")]
    title = lines[at] + " " + lines[at + 1]
    assert "not verified" not in title and "verified" in title, title
    decision = " ".join(lines[next(i for i, ln in enumerate(lines) if ln.startswith("Deploy ")):])
    assert "verified" in decision.split("runs:")[0], decision
    # the answer is the last thing said, before the paths
    tail = [line for line in lines if line.strip()][-12:]
    assert any(line.startswith("Deploy ") for line in tail), tail
    assert [line.split()[0] for line in tail if line.startswith(("runs:", "report:"))] == [
        "runs:", "report:"]
    _check_demo_files(tmp_path / "d")


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_capacity_demo_answers_first_on_an_80_column_terminal(tmp_path: Path) -> None:
    """`servecap demo`: the winner's answer first, then each deployment beside the seed's
    grid, whole on 80 columns, then where the answers, the report and the app are."""
    import json

    out = tmp_path / "d"
    code, raw = _run_on_pty([sys.executable, "-m", "servecap.cli.main", "demo", "--out",
                             str(out)], timeout_s=560)
    lines = _screen(raw)
    text = "\n".join(lines)
    assert code == 0, text[-3000:]
    start = next(i for i, line in enumerate(lines) if line.startswith("Deploy "))
    assert not any(BAR in line for line in lines[start:]), text
    answer = " ".join(lines[start:start + 4])
    assert "users verified (predicted" in answer and "simulator at x10" in answer, answer
    header = next(i for i in range(start, len(lines)) if lines[i].startswith("deployment"))
    rows = [lines[header + k].split() for k in range(1, 5)]
    assert [row[0] for row in rows] == ["vllm-direct", "vllm-spec", "sglang-direct",
                                        "sglang-spec"], text
    assert "…" not in text
    paths = [ln.split()[0] for ln in lines[header:] if ln.startswith(
        ("answers:", "report:", "explore them"))]
    assert paths == ["answers:", "report:", "explore"], text
    for name in ("vllm-direct", "sglang-spec"):
        data = json.loads((out / name / "capacity.json").read_text())
        assert data["complete"] and data["probes"]
    assert (out / "report" / "report.html").is_file()


def _check_demo_files(out: Path) -> None:
    """The comparison with the seed's pairs, the winner's verification beside the sweeps
    (where plan and the report read it), and a report that leads with the decision, then
    its chart, then the pairs."""
    import json

    (comp,) = (out / "runs").glob("compare-*")
    data = json.loads((comp / "comparison.json").read_text())
    assert data["schedule"] == "lockstep" and data["status"] == "complete"
    assert data["compared"] == [["vllm-direct", "vllm-spec"], ["sglang-direct", "sglang-spec"],
                                ["sglang-direct", "vllm-direct"]]
    (verified,) = comp.glob("*-verify-*/verification.json")
    assert json.loads(verified.read_text())["predicted_users"] > 0
    html = (out / "report" / "report.html").read_text()
    assert html.index('id="headline"') < html.index('id="chart-06"') < html.index(
        'id="comparison"')
    assert "x1 real time" in html
    assert "-verify" not in html.split('id="summary"')[0]  # a verify run is no deployment


def _levels() -> list[LevelSummary]:
    return [
        LevelSummary(
            concurrency=c, n_requests=10 * c, n_ok=10 * c, n_failed=0, ttft_mean_ms=51234.5 + c,
            ttft_p90_ms=10987.25, itl_mean_ms=12.3456, tps_mean=1234.56, tps_p90=987.65,
            latency_mean_s=123.456, rps=12345.678, output_tok_s=99999.9,
            served_concurrency=63.9, loop_lag_p99_ms=1.5, client_bound=c == 64,
            warnings=["P90 from only 3 samples (want >= 10)"] if c == 1 else [],
        )
        for c in (1, 2, 4, 8, 16, 32, 64)
    ]


@pytest.mark.parametrize("width", [80, 100, 200])
def test_tables_never_cut_numbers(width: int) -> None:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=True, color_system=None)
    print_table(console, levels_table("run (complete)", _levels()))
    text = out.getvalue()
    assert "…" not in text
    assert all(len(line) <= width for line in text.splitlines()), text
    for shown in ("51235.5", "10987.2", "987.6", "P90 of 3 samples", "client-bound"):
        assert shown in text
    if width == 80:
        assert "not shown at 80 columns:" in text and "12345.68" not in text
    if width == 200:
        assert "not shown" not in text and "12345.68" in text and "client-bound" in text


def test_piped_output_is_plain_text_with_every_column() -> None:
    out = io.StringIO()
    print_table(Console(file=out, width=80), levels_table("run", _levels()))
    text = out.getvalue()
    assert text == plain_text(levels_table("run", _levels()))
    assert not set(text) & set("│┃━─┏┗╇"), text
    assert "12345.68" in text and "99999.9" in text and "\x1b" not in text


def test_the_progress_total_grows_with_levels_a_plan_adds() -> None:
    """`--find-cmax` decides levels as it goes: the bar's total grows to hold each new one
    rather than running past 100%."""
    from servecap.cli.run_cmd import RichProgress
    from servecap.core.level_key import LevelKey
    from servecap.core.records import RequestRecord

    progress = RichProgress(Console(file=io.StringIO(), width=COLUMNS))
    progress.started(4, "run", "m")
    progress.level_started(LevelKey.closed(2), 4)
    for i in range(4):
        progress.request_done(RequestRecord(i, 2, i % 2, 0))
    progress.level_started(LevelKey.closed(3), 6)  # a refinement the grid did not hold
    progress.stop()
    (task,) = progress.bar.tasks
    assert (task.total, task.completed) == (10, 4)
