"""The client's own delay inside TTFT makes a level client-bound, lag probe or not."""

from __future__ import annotations

import socket
import time

from servecap.client.stamp_age import received_age_ms, sent_age_ms
from servecap.core.records import ClientHealth
from servecap.metrics.level import summarise_level
from tests.metrics.test_request_metrics import record

HEALTHY = ClientHealth(loop_lag_p99_ms=1.0, client_cpu_pct=5.0, client_bound=False)


def _level(delay_ms: float | None, ttft_ms: float = 50.0):
    rows = [record([ttft_ms + 10 * i for i in range(8)], 8, client_delay_ms=delay_ms)
            for _ in range(10)]
    return summarise_level(1, rows, HEALTHY)


def test_a_level_whose_ttft_holds_the_clients_delay_is_flagged():
    lv = _level(20.0)
    assert lv.client_delay_mean_ms == 20.0 and lv.client_bound is True
    assert "client-bound: the client's own delay averaged 20.0 ms of each TTFT" in lv.warnings


def test_a_small_delay_or_none_known_leaves_the_level_trusted():
    lv = _level(1.0)
    assert lv.client_delay_mean_ms == 1.0 and lv.client_bound is False
    unknown = _level(None)
    assert unknown.client_delay_mean_ms is None and unknown.client_bound is False


def test_the_bound_grows_with_a_slow_servers_ttft():
    assert _level(20.0, ttft_ms=1000.0).client_bound is False  # 2% of a 1 s TTFT
    assert _level(80.0, ttft_ms=1000.0).client_bound is True


#: the kernel dates a segment in jiffies: 10 ms at HZ=100, its coarsest
KERNEL_TICK_MS = 10


def test_the_kernel_dates_the_last_receive_and_send():
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.create_connection(server.getsockname())
        peer, _ = server.accept()
        with client, peer:
            peer.sendall(b"x")
            client.sendall(b"y")
            sent = time.monotonic()
            time.sleep(0.1)  # pace: some time for the kernel's ages to count
            waited_ms = 1000 * (time.monotonic() - sent)
            # at least what this test waited, less one kernel tick of rounding
            assert (received_age_ms(client) or 0) >= waited_ms - KERNEL_TICK_MS
            assert (sent_age_ms(client) or 0) >= waited_ms - KERNEL_TICK_MS
    assert received_age_ms(None) is None
