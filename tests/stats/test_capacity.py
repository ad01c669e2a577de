import pytest

from servecap.core.config import SLO
from servecap.core.summary import LevelSummary
from servecap.kinds.registry import kind_of
from servecap.stats.capacity import plan_levels, users_by_littles_law


def level(c, ttft, tps, lat, error_rate=None):
    return LevelSummary(concurrency=c, ttft_p90_ms=ttft, ttft_mean_ms=ttft, tps_p90=tps,
                        tps_mean=tps, latency_mean_s=lat, error_rate=error_rate)


def test_littles_law_rounds_to_nearest():
    assert users_by_littles_law(32, 3.65, 45) == 427
    assert users_by_littles_law(2, 1.58, 45) == 59


def test_c_max_needs_every_lower_level_to_pass():
    levels = [level(1, 100, 50, 1.0), level(2, 1200, 50, 1.0), level(4, 500, 50, 1.0)]
    plan = plan_levels(levels, SLO(), kind_of)
    assert plan.c_max == 1
    assert plan.users == round(1 * (1 + 45 / 1.0))
    assert [v.ttft_ok for v in plan.levels] == [True, False, True]


def test_no_compliant_level_gives_no_capacity():
    plan = plan_levels([level(1, 2000, 50, 1.0)], SLO(), kind_of)
    assert plan.c_max is None and plan.users is None


def test_failures_are_slo_misses():
    levels = [level(1, 100, 50, 1.0), level(2, 100, 50, 1.0, error_rate=0.1)]
    plan = plan_levels(levels, SLO(), kind_of)
    assert plan.c_max == 1


def test_tps_slo_uses_statistic():
    levels = [level(1, 100, 14.9, 2.0)]
    assert plan_levels(levels, SLO(tps=15), kind_of).c_max is None
    assert plan_levels(levels, SLO(tps=14), kind_of).c_max == 1
    assert plan_levels(levels, SLO(tps=14, think_time_s=0), kind_of).users == 1


def test_slo_rejects_nonsense():
    with pytest.raises(ValueError):
        SLO(ttft_ms=0)
