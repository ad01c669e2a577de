"""The capacity of a rate sweep (pure): the highest compliant offered rate, TTFT judged
from the target time, users N = X * (R + Z), and goodput (DistServe's definition)."""

from __future__ import annotations

import pytest

from servecap.core.config import SLO
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary
from servecap.kinds.registry import kind_of
from servecap.kinds.window import Window
from servecap.metrics.goodput import goodput_by_level, level_goodput, meets_slo
from servecap.stats.capacity import plan_levels

MS = 1_000_000


def level(rate: float, ttft_sched_p90: float, tps_p90: float = 30.0, lat: float = 2.0,
          ttft_p90: float = 100.0) -> LevelSummary:
    return LevelSummary.for_key(
        LevelKey("rate", rate, "/s"), ttft_p90_ms=ttft_p90, ttft_sched_p90_ms=ttft_sched_p90,
        tps_p90=tps_p90, latency_mean_s=lat, error_rate=0.0,
    )


def test_the_top_rate_and_the_users_it_serves() -> None:
    levels = [level(1, 200), level(2, 400, lat=2.5), level(4, 900, lat=3.0), level(8, 5000)]
    plan = plan_levels(levels, SLO(ttft_ms=1000, tps=15, think_time_s=45), kind_of)
    assert plan.top == LevelKey("rate", 4, "/s") and plan.rate_max == 4.0 and plan.c_max is None
    # N = X * (R + Z) = 4 * (3.0 + 45) = 192
    assert plan.latency_mean_s == 3.0 and plan.users == 192
    assert [v.ok for v in plan.levels] == [True, True, True, False]
    assert plan.levels[2].model_dump()["level"] == "rate=4/s"


def test_ttft_is_judged_from_the_target_time_where_the_level_has_it() -> None:
    # from the send the TTFT looks fine (100 ms), but users waited 1500 ms from arrival
    plan = plan_levels([level(1, 200), level(2, 1500)], SLO(ttft_ms=1000), kind_of)
    assert plan.rate_max == 1.0 and plan.levels[1].ttft == 1500
    # a level without schedule columns (closed, imported) is judged from the send as before
    closed = LevelSummary.for_key(LevelKey.closed(2), ttft_p90_ms=100.0, tps_p90=30.0,
                                  latency_mean_s=2.0, error_rate=0.0)
    assert plan_levels([closed], SLO(), kind_of).c_max == 2


def test_a_rate_above_a_failing_one_never_counts() -> None:
    plan = plan_levels([level(1, 200), level(2, 1200), level(4, 300)], SLO(ttft_ms=1000), kind_of)
    assert plan.rate_max == 1.0 and plan.users == round(1 * (2.0 + 45))


def test_no_compliant_rate() -> None:
    plan = plan_levels([level(1, 2000)], SLO(ttft_ms=1000), kind_of)
    assert plan.rate_max is None and plan.users is None and plan.top is None


def rec(i: int, ttft_ms: float, latency_s: float = 1.0, late_ms: float = 0.0,
        ok: bool = True, rate: float = 4.0, at_s: float = 0.0) -> RequestRecord:
    r = RequestRecord.for_level(LevelKey("rate", rate, "/s"), i, i, round(at_s * 1e9))
    r.sent_at = r.scheduled_at + round(late_ms * MS)
    r.first_token_at = r.scheduled_at + round(ttft_ms * MS)
    r.ended_at = r.sent_at + round(latency_s * 1e9)
    r.last_token_at, r.chunk_at, r.completion_tokens = r.ended_at, [r.first_token_at], 20
    if not ok:
        r.status, r.reason = "failed", "http_5xx"
    return r


def test_goodput_counts_requests_that_met_every_slo() -> None:
    slo = SLO(ttft_ms=500, tps=15)
    good = rec(0, 100)  # 20 tokens in 1 s: TPS 20
    slow_first = rec(1, 600)  # TTFT from the target over 500 ms
    slow_stream = rec(2, 100, latency_s=2.0)  # TPS 10
    failed = rec(3, 100, ok=False)
    late = rec(4, 300, late_ms=250)  # TTFT from target 300: inside, though sent late
    assert [meets_slo(r, slo) for r in (good, slow_first, slow_stream, failed, late)] == [
        True, False, False, False, True,
    ]
    result = level_goodput([good, slow_first, slow_stream, failed, late], 4.0, slo)
    assert result.n_good == 2 and result.attainment == pytest.approx(0.4)
    assert result.goodput_rps == pytest.approx(4.0 * 0.4)
    assert level_goodput([], 4.0, slo).goodput_rps is None


def test_goodput_by_level_uses_the_window_and_skips_other_kinds() -> None:
    slo = SLO(ttft_ms=500, tps=15)
    rows = [rec(i, 100 if i else 900, at_s=i) for i in range(6)]  # the first one is slow
    closed = RequestRecord.for_level(LevelKey.closed(1), 9, 0, 0)
    everything = goodput_by_level([*rows, closed], {}, slo)
    assert list(everything) == [LevelKey("rate", 4.0, "/s")]
    assert everything[LevelKey("rate", 4.0, "/s")].n_good == 5
    # the window leaves the slow first request (in the ramp) out
    windowed = goodput_by_level(rows, {"open": Window(0.5, 0.0)}, slo)[LevelKey("rate", 4.0, "/s")]
    assert windowed.n_requests == 5 and windowed.goodput_rps == pytest.approx(4.0)
