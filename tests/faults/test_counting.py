"""Counting: the fault server's log of requests it read equals servecap's rows over a whole
run of mixed faults (no request is ever sent twice), and the small counts a summary keeps
(`reconnects`, `missing_done`, `utf8_replaced`, estimated tokens) are there."""

from __future__ import annotations

from pathlib import Path

from tests.faults.runs import invoke, only_run_dir, rows, run_args, summary
from tests.servers.fault_server import FAULTS, FaultServer, FaultServerThread

# every fault but those that only wait out a timeout (each would add seconds, not a case)
SLOW = {"slow_ok", "slow_headers", "drip_feed", "stall_mid_stream"}
MIXTURE = [name for name in FAULTS if name not in SLOW]


def test_whole_run_fault_mixture_rows_equal_requests_received(tmp_path: Path) -> None:
    # drops and llama-style closes between every other fault: each follows a reused socket
    queue = [f for name in MIXTURE for f in (name, "drop_after_read", "ok_then_close")] * 2
    server = FaultServer(queue=queue)
    with FaultServerThread(server) as thread:
        result = invoke(run_args(thread.base_url, tmp_path / "out", "--concurrency", "1,3",
                                 "--rounds", str(len(queue) // 4 + 2)))
    assert result.exit_code == 0, result.stderr
    run_dir = only_run_dir(tmp_path / "out")
    stored = rows(run_dir)
    assert len(stored) == server.completions == len(server.log)
    dropped = [r for r in stored if r["reason"] == "server_disconnected"]
    assert len(dropped) == server.log.count("drop_after_read")
    levels = summary(run_dir)
    assert sum(lv["reconnects"] for lv in levels) == sum(r["reconnects"] for r in stored)
    assert sum(lv["n_requests"] for lv in levels) == len(stored)


def _one_fault(fault: str, tmp_path: Path) -> tuple[dict, dict, str]:
    server = FaultServer(queue=["ok", fault, "ok"])
    with FaultServerThread(server) as thread:
        result = invoke(run_args(thread.base_url, tmp_path / "out"))
    assert result.exit_code == 0, result.stderr
    run_dir = only_run_dir(tmp_path / "out")
    return rows(run_dir)[1], summary(run_dir)[0], result.stderr


def test_a_stream_without_done_is_counted(tmp_path: Path) -> None:
    row, level, _ = _one_fault("finish_without_done", tmp_path)
    assert row["status"] == "ok" and row["missing_done"] is True
    assert level["missing_done"] == 1


def test_invalid_utf8_replacements_are_counted(tmp_path: Path) -> None:
    row, level, _ = _one_fault("invalid_utf8", tmp_path)
    assert row["utf8_replaced"] == 2  # \xff and \xfe
    assert level["utf8_replaced"] == 2


def test_estimated_tokens_are_warned_about(tmp_path: Path) -> None:
    _, level, _ = _one_fault("usage_missing", tmp_path)
    assert any("estimated" in w for w in level["warnings"]), level["warnings"]


def test_a_level_without_successes_shows_no_ttft_mean(tmp_path: Path) -> None:
    server = FaultServer(default="http_500")
    with FaultServerThread(server) as thread:
        result = invoke(run_args(thread.base_url, tmp_path / "out"))
    assert result.exit_code == 0, result.stderr
    assert "TTFT mean 0.0" not in result.stderr
    assert "TTFT mean n/a ms" in result.stderr  # the one text for a missing value


def test_a_server_closing_after_every_stream_runs_clean(tmp_path: Path) -> None:
    # llama-server: keep-alive advertised, the connection closed after each stream
    server = FaultServer(default="ok_then_close")
    with FaultServerThread(server) as thread:
        result = invoke(run_args(thread.base_url, tmp_path / "out", "--concurrency", "1,3",
                                 "--rounds", "5"))
    assert result.exit_code == 0, result.stderr
    stored = rows(only_run_dir(tmp_path / "out"))
    assert [r["status"] for r in stored] == ["ok"] * 20, {r["reason"] for r in stored}
    assert server.completions == 20
