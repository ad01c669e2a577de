"""The client's own delay from a request's due time to its send is summarised per level,
every kind, and a level whose sends lag flags itself client-bound."""

from __future__ import annotations

from servecap.core.records import ClientHealth
from servecap.metrics.level import summarise_level
from tests.metrics.test_request_metrics import MS, record

HEALTHY = ClientHealth(loop_lag_p99_ms=1.0, client_cpu_pct=5.0, client_bound=False)


def _level(gaps_ms: list[float]):
    rows = []
    for gap in gaps_ms:
        row = record([gap + 50 + 10 * i for i in range(8)], 8, sent_ms=gap)
        row.scheduled_at = 0  # due at 0, its last byte at the kernel `gap` ms later
        rows.append(row)
    return summarise_level(4, rows, HEALTHY)


def test_a_closed_level_summarises_its_send_gap():
    lv = _level([0.5] * 99 + [2.0])
    assert lv.send_gap_mean_ms == 0.515 and lv.send_gap_max_ms == 2.0
    assert 0.5 < lv.send_gap_p99_ms < 2.0
    assert lv.send_lateness_p99_ms is None  # a closed loop has no schedule to be late for
    assert lv.client_bound is False
    assert lv.ttft_mean_ms == 50.0  # TTFT starts at the send: the gap is not in it


def test_a_level_whose_sends_lag_is_client_bound_and_says_why():
    lv = _level([1.0] * 90 + [30.0] * 10)
    assert lv.client_bound is True
    assert any(w.startswith("client-bound: its sends lagged (send gap p99 30.0 ms")
               for w in lv.warnings), lv.warnings


def test_a_cap_wait_is_not_the_clients_delay():
    rows = []
    for _ in range(20):
        row = record([150 + 10 * i for i in range(8)], 8, sent_ms=100.5)
        row.scheduled_at, row.admitted_at = 0, 100 * MS  # waited 100 ms for the cap
        rows.append(row)
    lv = summarise_level(2, rows, HEALTHY)
    assert lv.send_gap_max_ms == 0.5 and lv.client_bound is False


def test_opening_a_connection_is_not_the_clients_lag():
    rows = []
    for _ in range(20):
        row = record([90 + 10 * i for i in range(8)], 8, sent_ms=40.5, connect_ms=40.0)
        row.scheduled_at = 0  # due at 0; 40 ms of it the server's accept and handshake
        rows.append(row)
    lv = summarise_level(2, rows, HEALTHY)
    assert lv.send_gap_max_ms == 0.5 and lv.client_bound is False
