"""One parametrised test per fault: the stored row, the summary and the run going on.

Each run is `servecap run` at concurrency 1, three requests, no warm-up, against the fault
server whose queue is `ok, <fault>, ok`: the middle row carries the fault, the others prove
the run went on, and the level summary must count it without letting it into percentiles.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from servecap.core.records import FAILURE_REASONS, RequestRecord
from servecap.core.summary import DISTRIBUTION_METRICS, column
from servecap.metrics.level import summarise_level
from tests.faults.runs import invoke, only_run_dir, rows, run_args, summary
from tests.servers.fault_server import FaultServer, FaultServerThread


@dataclass(frozen=True)
class Expect:
    status: str
    reason: str | None = None
    http_status: int | None = 200
    tokens: int | None = None  # completion tokens stored (so far, for failures)
    token_source: str | None = None
    first_token: bool | None = None  # first_token_at set?
    first_answer: bool | None = None
    detail_has: str | None = None


EXPECTED: dict[str, Expect] = {
    "reset_mid_stream": Expect("failed", "stream_truncated", tokens=2, first_token=True),
    "slow_headers": Expect("failed", "header_timeout", http_status=None, tokens=0,
                           first_token=False),
    "stall_mid_stream": Expect("failed", "stream_stall", tokens=2, first_token=True),
    "drip_feed": Expect("failed", "total_timeout", first_token=True),
    "truncated": Expect("failed", "stream_truncated", tokens=2, first_token=True),
    "finish_without_done": Expect("ok", tokens=4, token_source="usage"),
    "non_json_line": Expect("failed", "malformed_sse", tokens=1, first_token=True),
    "html_200": Expect("failed", "unexpected_content_type", tokens=0, first_token=False,
                       detail_has="text/html"),
    "json_200": Expect("failed", "unexpected_content_type", tokens=0, first_token=False,
                       detail_has="application/json"),
    "error_in_stream": Expect("failed", "server_error_in_stream", tokens=1,
                              detail_has="engine overloaded"),
    "http_400": Expect("failed", "http_4xx", http_status=400, tokens=0, first_token=False),
    "http_401": Expect("failed", "http_4xx", http_status=401, tokens=0, first_token=False),
    "http_404": Expect("failed", "http_4xx", http_status=404, tokens=0, first_token=False),
    "http_429": Expect("failed", "rate_limited", http_status=429, tokens=0,
                       detail_has="Retry-After: 7"),
    "http_500": Expect("failed", "http_5xx", http_status=500, tokens=0),
    "http_503": Expect("failed", "http_5xx", http_status=503, tokens=0,
                       detail_has="Retry-After: 2"),
    "huge_line": Expect("failed", "response_too_large", tokens=1, first_token=True),
    "utf8_split": Expect("ok", tokens=1, token_source="usage", first_answer=True),
    "invalid_utf8": Expect("ok", tokens=1, token_source="usage", first_answer=True),
    "usage_missing": Expect("ok", tokens=4, token_source="estimated"),
    "zero_tokens": Expect("failed", "empty_response", tokens=0, first_token=False),
    "reasoning_only": Expect("ok", tokens=4, token_source="usage", first_token=True,
                             first_answer=False),
    "tool_call_only": Expect("ok", tokens=3, token_source="usage", first_token=True,
                             first_answer=False),
    # read on the reused connection, then hung up on: the server's fault, sent once only
    "drop_after_read": Expect("failed", "server_disconnected", http_status=None, tokens=0,
                              first_token=False),
    "ok_then_close": Expect("ok", tokens=4, token_source="usage", first_token=True),
}


def _run_with_fault(fault: str, tmp_path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    server = FaultServer(queue=["ok", fault, "ok"])
    with FaultServerThread(server) as thread:
        result = invoke(run_args(thread.base_url, tmp_path / "out"))
    assert result.exception is None, result.exception
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert server.completions == 3
    run_dir = only_run_dir(tmp_path / "out")
    levels = summary(run_dir)
    assert len(levels) == 1
    return rows(run_dir), levels[0]


def _check_row(row: dict[str, Any], expect: Expect) -> None:
    assert row["status"] == expect.status, row
    assert row["reason"] == expect.reason, row
    assert row["http_status"] == expect.http_status, row
    assert row["sent_at"] is not None and row["ended_at"] >= row["sent_at"]
    if expect.tokens is not None:
        assert row["completion_tokens"] == expect.tokens, row
    if expect.token_source is not None:
        assert row["token_source"] == expect.token_source, row
    if expect.first_token is not None:
        assert (row["first_token_at"] is not None) == expect.first_token, row
    if expect.first_answer is not None:
        assert (row["first_answer_at"] is not None) == expect.first_answer, row
    if expect.detail_has is not None:
        assert expect.detail_has in (row["detail"] or ""), row
    if row["first_token_at"] is not None:  # partial timings are ordered
        assert row["sent_at"] <= row["first_byte_at"] <= row["first_token_at"]
        assert row["first_token_at"] <= row["last_token_at"] <= row["ended_at"]
        assert len(row["chunk_at"]) >= 1


def _check_summary(level: dict[str, Any], all_rows: list[dict[str, Any]],
                   expect: Expect) -> None:
    failed = expect.status == "failed"
    assert level["n_requests"] == 3
    assert level["n_failed"] == int(failed)
    assert level["n_ok"] == 3 - int(failed)
    assert level["error_rate"] == pytest.approx(int(failed) / 3)
    assert level["failures"] == ({expect.reason: 1} if failed else {})
    ok_only = summarise_level(1, [RequestRecord.from_dict(r) for r in all_rows if
                                  r["status"] == "ok"])
    for metric in DISTRIBUTION_METRICS:
        for stat in ("mean", "p50", "p90", "p99", "max"):
            name = column(metric, stat)
            if name in level:
                assert level[name] == pytest.approx(getattr(ok_only, name)), name


@pytest.mark.slow
@pytest.mark.parametrize("fault", sorted(EXPECTED))
def test_fault_is_recorded_and_run_goes_on(fault: str, tmp_path: Path) -> None:
    expect = EXPECTED[fault]
    if expect.reason is not None:
        assert expect.reason in FAILURE_REASONS
    all_rows, level = _run_with_fault(fault, tmp_path)
    assert [r["request_id"] for r in all_rows] == [0, 1, 2]
    assert all_rows[0]["status"] == "ok" and all_rows[2]["status"] == "ok", all_rows
    _check_row(all_rows[1], expect)
    _check_summary(level, all_rows, expect)


def test_utf8_split_decodes_every_character(tmp_path: Path) -> None:
    all_rows, _ = _run_with_fault("utf8_split", tmp_path)
    assert all_rows[1]["output_chars"] == len("héllo 世界 🙂")


@pytest.mark.slow
def test_drip_feed_keeps_tokens_so_far(tmp_path: Path) -> None:
    all_rows, _ = _run_with_fault("drip_feed", tmp_path)
    row = all_rows[1]
    assert row["completion_tokens"] >= 5 and row["token_source"] == "estimated"
    assert 1.9e9 <= row["ended_at"] - row["sent_at"] <= 3.5e9
