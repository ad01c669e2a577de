"""A sessions level's own columns: measured mean concurrency against the response-time law,
mean think time, and TTFT by turn index.

The level's window runs from its first to its last steady-state send (requests sent during
the warm-up are left out). Mean concurrency is the time the measured requests spent in flight
(each whole, from send to end) over the window's length: Little's law on the requests sent
in the window, so edge effects cancel in the steady state (the requests still running at the
window's close stand in for those the warm-up left in flight at its open). Clipping every
request to the window instead counts the warm-up's slow first turns (cold start) as steady-state
load, which overstated the concurrency by up to 20% on short levels. R is the mean
latency of the measured requests and Z the mean think time drawn after each request that
ended in the window: chosen by when the think starts, never by its length, so the thinks the
level's end cuts short count too (counting only thinks followed by a turn would drop the
long ones and bias Z low). A drawn think is not all the time a user is idle, though: the
client also takes time to see the end of an answer and to send the next turn, and under a
busy client that lag is counted nowhere else. So Z is the mean drawn think plus the mean
lag measured where a next turn followed (its `sent_at` minus the answer's `ended_at`, less the
think drawn between them). The law's N * R / (R + Z) (`stats.response_time.check_law`) is
then checked against the run's own numbers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from servecap.core.records import RequestRecord
from servecap.core.request_metrics import request_metrics
from servecap.stats.response_time import check_law

NS_PER_S = 1e9
NS_PER_MS = 1e6


def ttft_by_turn(records: Sequence[RequestRecord]) -> dict[str, float]:
    """Mean TTFT (ms) of successful requests by their turn index ("1" = a first turn)."""
    by_turn: dict[int, list[float]] = defaultdict(list)
    for record in records:
        metrics = request_metrics(record)
        if metrics is not None and record.turn is not None:
            by_turn[record.turn].append(metrics.ttft_ns / NS_PER_MS)
    return {str(turn): float(np.mean(v)) for turn, v in sorted(by_turn.items())}


def session_fields(records: Sequence[RequestRecord], users: int) -> dict[str, Any]:
    """The sessions columns of one level from all its records (warm-up rows included)."""
    measured = [r for r in records if not r.warmup]
    sent = [r.sent_at for r in measured if r.sent_at is not None]
    out: dict[str, Any] = {"users": users, "ttft_by_turn_ms": ttft_by_turn(measured)}
    latencies = [
        (r.ended_at - r.sent_at) / NS_PER_S
        for r in measured if r.sent_at is not None and r.ended_at is not None
    ]
    if not sent:
        return out
    start, end = min(sent), max(sent)
    thinks = [
        r.think_after_s for r in records
        if r.think_after_s is not None and r.ended_at is not None and start <= r.ended_at <= end
    ]
    if thinks:
        out["think_time_mean_s"] = float(np.mean(thinks))
    lags = _send_lags(records, start, end)
    if lags:
        out["think_lag_mean_s"] = float(np.mean(lags))
    concurrency = sum(latencies) / ((end - start) / NS_PER_S) if end > start else None
    if concurrency is None or not latencies or not thinks:
        return out
    idle = float(np.mean(thinks)) + (float(np.mean(lags)) if lags else 0.0)
    law = check_law(users, float(np.mean(latencies)), idle, concurrency)
    out.update(
        mean_concurrency=concurrency,
        law_concurrency=law.predicted_concurrency,
        law_error=law.error,
        response_mean_s=law.response_mean_s,
    )
    return out


def _send_lags(records: Sequence[RequestRecord], start: int, end: int) -> list[float]:
    """Seconds each user took beyond its drawn think to send its next turn, for the answers
    that ended in [start, end] and were followed by a turn."""
    by_user: dict[int, list[RequestRecord]] = defaultdict(list)
    for r in records:
        if r.user is not None and r.sent_at is not None:
            by_user[r.user].append(r)
    lags: list[float] = []
    for turns in by_user.values():
        turns.sort(key=lambda r: r.sent_at or 0)
        for done, following in zip(turns, turns[1:], strict=False):
            if done.ended_at is None or done.think_after_s is None or following.sent_at is None:
                continue
            if start <= done.ended_at <= end:
                gap_s = (following.sent_at - done.ended_at) / NS_PER_S
                lags.append(max(0.0, gap_s - done.think_after_s))
    return lags
