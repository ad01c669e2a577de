"""Garbage in, no numbers out: a server's negative usage, stored rows that no level can hold
or that run backwards in time, imported tables with negative metrics or duplicate rows, and
calibration input with NaN."""

from __future__ import annotations

import json
from pathlib import Path

from tests.faults.runs import invoke, only_run_dir, rows, run_args, summary
from tests.faults.test_bad_input import assert_one_error
from tests.servers.fault_server import FaultServer, FaultServerThread

GOOD = {"request_id": 1, "concurrency": 2, "stream_index": 0, "scheduled_at": 0,
        "sent_at": 10, "first_byte_at": 20, "first_token_at": 30, "last_token_at": 90,
        "ended_at": 100, "chunk_at": [30, 60, 90], "completion_tokens": 3}


def test_negative_usage_is_ignored_not_measured(tmp_path: Path) -> None:
    server = FaultServer(default="negative_usage")
    with FaultServerThread(server) as thread:
        result = invoke(run_args(thread.base_url, tmp_path / "out"))
    assert result.exit_code == 0, result.stderr
    run_dir = only_run_dir(tmp_path / "out")
    stored = rows(run_dir)
    assert stored and all(r["completion_tokens"] > 0 and r["prompt_tokens"] > 0
                          for r in stored)
    assert {r["token_source"] for r in stored} == {"estimated"}
    assert all(level["tps_mean"] > 0 for level in summary(run_dir))


def _stored_run(tmp_path: Path, lines: list[dict]) -> Path:
    run = tmp_path / "run-a"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"name": "a", "status": "complete"}))
    (run / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    return run


def test_rows_no_level_can_hold_are_said_to_be_skipped(tmp_path: Path) -> None:
    dropped = [{**GOOD, "concurrency": 0}, {**GOOD, "concurrency": -4}]
    run = _stored_run(tmp_path, [GOOD, *dropped])
    result = invoke(["show", str(run)])
    assert result.exit_code == 0, result.stderr
    assert "2 unreadable or implausible row(s) skipped" in result.stdout + result.stderr


def test_a_row_that_runs_backwards_in_time_is_no_measurement(tmp_path: Path) -> None:
    backwards = {**GOOD, "request_id": 2, "first_token_at": 5, "chunk_at": [5, 60, 90]}
    negative = {**GOOD, "request_id": 3, "sent_at": -1000}
    run = _stored_run(tmp_path, [GOOD, backwards, negative])
    result = invoke(["show", str(run), "--format", "json"])
    assert result.exit_code == 0, result.stderr
    (level,) = json.loads(result.stdout)["levels"]
    assert level["n_requests"] == 1 and level["ttft_mean_ms"] > 0


HEADER = "config,concurrency,ttft_mean_ms,tps_mean\n"


def test_import_summary_refuses_negative_metrics_and_duplicate_rows(tmp_path: Path) -> None:
    negative = tmp_path / "negative.csv"
    negative.write_text(HEADER + "a,1,100,-3\n")
    twice = tmp_path / "twice.csv"
    twice.write_text(HEADER + "a,1,100,30\na,2,120,28\na,1,90,31\n")
    for path, needle in ((negative, "negative"), (twice, "a second row")):
        result = invoke(["import-summary", str(path), "--out", str(tmp_path / "out")])
        assert_one_error(result, needle)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_sim_calibrate_refuses_a_summary_with_nan(tmp_path: Path) -> None:
    levels = [{"concurrency": c, "ttft_mean_ms": 50.0 * c, "itl_mean_ms": 10.0,
               "tps_mean": 90.0, "latency_mean_s": 1.0} for c in (1, 2, 4)]
    levels[1]["ttft_mean_ms"] = float("nan")
    path = tmp_path / "summary.json"
    path.write_text(json.dumps(levels))  # json writes NaN, which is not JSON
    result = invoke(["sim", "calibrate", str(path), "--out", str(tmp_path / "p.toml")])
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert "not a finite number" in result.stderr and not (tmp_path / "p.toml").exists()
