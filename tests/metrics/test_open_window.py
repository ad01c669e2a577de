"""The steady-state window and an open-loop level's schedule columns, on hand-made records
(pure: no clock, no server)."""

from __future__ import annotations

import pytest

from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.summary import SUMMARY_COLUMNS
from servecap.kinds.closed import ClosedLoad
from servecap.kinds.open_loop import OpenLoad
from servecap.kinds.window import Window, apply_window
from servecap.metrics.level import summarise_level, summarise_records
from servecap.metrics.schedule import CLIENT_LATE_P99_MS

S = 1_000_000_000
MS = 1_000_000
RATE = LevelKey("rate", 2.0, "/s")


def rec(i: int, at_s: float, latency_s: float = 0.5, late_ms: float = 0.0,
        admitted_ms: float | None = None, ok: bool = True) -> RequestRecord:
    r = RequestRecord.for_level(RATE, i, i, round(at_s * S))
    if admitted_ms is not None:
        r.admitted_at = r.scheduled_at + round(admitted_ms * MS)
    r.sent_at = r.scheduled_at + round(late_ms * MS)
    r.first_token_at = r.sent_at + 100 * MS
    r.ended_at = r.sent_at + round(latency_s * S)
    r.last_token_at = r.ended_at
    r.chunk_at = [r.first_token_at, r.ended_at]
    r.completion_tokens = 10
    if not ok:
        r.status, r.reason = "failed", "http_5xx"
    return r


def test_the_window_leaves_out_the_ramp_and_the_drain() -> None:
    # scheduled at 0..9 s, each 0.5 s long: the level spans 0 .. 9.5 s
    rows = [rec(i, float(i)) for i in range(10)]
    out = apply_window(rows, Window(warmup_s=2.0, cooldown_s=2.0))
    # starts before 2 s (0, 1) and ends after 7.5 s (8, 9 end at 8.5, 9.5) are left out
    assert [r.request_id for r in out.kept] == [2, 3, 4, 5, 6, 7]
    assert out.left_out == 4 and out.span_s == pytest.approx(5.5)
    # a request that starts inside the window but ends in the drain is left out too
    long = [*rows[:9], rec(9, 7.0, latency_s=2.4)]
    assert 9 not in [r.request_id for r in apply_window(long, Window(2.0, 2.0)).kept]
    # boundaries are inclusive: starting exactly at warm-up end is kept
    assert 2 in [r.request_id for r in out.kept]


def test_an_empty_window_keeps_everything_and_no_records_is_empty() -> None:
    rows = [rec(i, float(i)) for i in range(3)]
    assert apply_window(rows, Window()).kept == rows and apply_window(rows, Window()).left_out == 0
    empty = apply_window([], Window(1.0, 1.0))
    assert empty.kept == [] and empty.left_out == 0 and empty.span_s is None
    # a window wider than the level keeps nothing, and says it left everything out
    assert apply_window(rows, Window(5.0, 5.0)).left_out == 3
    summary = summarise_level(RATE, rows, None, window=Window(5.0, 5.0))
    assert summary.n_requests == 0 and any("all of them" in w for w in summary.warnings)
    with pytest.raises(ValueError):
        Window(-1.0, 0.0)


def test_an_open_level_owns_its_window_and_a_closed_one_has_none() -> None:
    load = OpenLoad(rates=[1.0], duration_s=30, warmup_s=3, cooldown_s=4)
    assert load.levels()[0].window() == Window(3.0, 4.0)
    assert ClosedLoad(concurrency=[2]).levels()[0].window() is None


def test_schedule_columns_of_an_open_level() -> None:
    rows = [rec(i, i * 0.5, late_ms=1.0 + (i % 2)) for i in range(20)]
    rows[5] = rec(5, 2.5, late_ms=40.0, admitted_ms=39.5)  # waited on the cap, then sent
    rows[6] = rec(6, 3.0, ok=False)
    s = summarise_level(RATE, rows, None, window=Window(1.0, 1.0))
    # kept: start >= 1 s and end <= 9.5 + 0.5 - 1 = 9 s -> requests 2..17
    assert s.n_left_out == 4 and s.n_requests == 16 and s.n_ok == 15
    assert any("4 requests in the warm-up/cool-down window" in w for w in s.warnings)
    assert s.offered_rps == 2.0
    assert s.n_cap_waited == 1 and s.cap_wait_max_ms == pytest.approx(39.5)
    assert s.send_lateness_max_ms == pytest.approx(40.0)
    # request 6 (the failure) was sent on time: lateness 0
    others = sum(1.0 + (i % 2) for i in range(2, 18) if i not in (5, 6))
    assert s.send_lateness_mean_ms == pytest.approx((40.0 + others) / 16)
    # TTFT from the target time adds the lateness; from the send it does not
    assert s.ttft_mean_ms == pytest.approx(100.0)
    assert s.ttft_sched_p99_ms is not None and s.ttft_sched_p99_ms > 100.0
    assert s.latency_sched_mean_s is not None and s.latency_sched_mean_s > s.latency_mean_s
    # sends every 0.5 s inside the window: 2 per second; the failure is not achieved
    assert s.sent_rps == pytest.approx(2.0, rel=0.01)
    assert s.achieved_rps is not None and s.achieved_rps < s.sent_rps
    # the cap's 39.5 ms wait is not the client's lateness: it stays within schedule
    assert s.client_bound is False


def test_a_client_that_falls_behind_is_flagged() -> None:
    rows = [rec(i, i * 0.5, late_ms=CLIENT_LATE_P99_MS * 3) for i in range(10)]
    s = summarise_level(RATE, rows, None, window=Window())
    assert s.client_bound is True and any("client-bound" in w for w in s.warnings)


def test_recomputed_summaries_use_the_window_and_closed_rows_keep_their_columns() -> None:
    rows = [rec(i, float(i)) for i in range(10)]
    again = summarise_records(rows, None, windows={"open": Window(2.0, 2.0)})
    assert again[0].n_left_out == 4 and again[0].n_requests == 6
    closed = RequestRecord.for_level(LevelKey.closed(1), 0, 0, 0)
    assert "admitted_at" not in closed.to_dict()
    assert "n_left_out" not in SUMMARY_COLUMNS and "cap_wait_p99_ms" not in SUMMARY_COLUMNS
    summary = summarise_records([closed])[0]
    assert summary.n_left_out is None and "n_left_out" not in summary.stored()
