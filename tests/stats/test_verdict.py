import pytest

from servecap.stats.bootstrap import Interval
from servecap.stats.verdict import (
    Verdict,
    cmax_bracket,
    combine,
    judge_interval,
    judge_metric,
    judge_slos,
)


def iv(estimate, low, high):
    return Interval(estimate=estimate, low=low, high=high, confidence=0.95, n=100, resamples=1000)


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (800, 950, Verdict.PASS),
        (800, 1000, Verdict.PASS),  # at the threshold still meets "<="
        (900, 1100, Verdict.UNDECIDED),
        (1000.5, 1300, Verdict.FAIL),
        (1000, 1300, Verdict.UNDECIDED),
    ],
)
def test_lower_is_better_ttft(low, high, expected):
    assert judge_interval(low, high, 1000, higher_is_better=False) is expected


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (15, 20, Verdict.PASS),
        (16, 20, Verdict.PASS),
        (12, 17, Verdict.UNDECIDED),
        (10, 14.9, Verdict.FAIL),
        (10, 15, Verdict.UNDECIDED),
    ],
)
def test_higher_is_better_tps(low, high, expected):
    assert judge_interval(low, high, 15, higher_is_better=True) is expected


def test_inverted_interval_is_a_bug():
    with pytest.raises(ValueError):
        judge_interval(2, 1, 1.5, higher_is_better=False)


def test_combine():
    P, F, U = Verdict.PASS, Verdict.FAIL, Verdict.UNDECIDED
    assert combine([P, P]) is P
    assert combine([P, U]) is U
    assert combine([U, F]) is F
    assert combine([]) is P


def test_metric_point_and_interval_verdicts_differ_when_unsure():
    m = judge_metric("ttft", iv(950, 850, 1100), 1000, higher_is_better=False)
    assert m.point is Verdict.PASS and m.verdict is Verdict.UNDECIDED
    none = judge_metric("tps", None, 15, higher_is_better=True)
    assert none.point is Verdict.FAIL and none.verdict is Verdict.FAIL


def test_level_verdicts_and_goodput_rule():
    good = judge_slos(iv(500, 450, 560), iv(30, 28, 33), ttft_slo_ms=1000, tps_slo=15,
                      error_rate=0.0)
    assert good.point_ok and good.verdict is Verdict.PASS and good.missed == ()
    failing = judge_slos(iv(500, 450, 560), iv(30, 28, 33), ttft_slo_ms=1000, tps_slo=15,
                         error_rate=0.01)
    assert not failing.point_ok and failing.verdict is Verdict.FAIL
    assert failing.missed == ("errors",)
    unsure = judge_slos(iv(990, 900, 1100), iv(30, 28, 33), ttft_slo_ms=1000, tps_slo=15,
                        error_rate=None)
    assert unsure.point_ok and unsure.verdict is Verdict.UNDECIDED


def level(ttft, tps, error_rate=0.0):
    return judge_slos(ttft, tps, ttft_slo_ms=1000, tps_slo=15, error_rate=error_rate)


def test_cmax_bracket_names_neighbours_and_binding_slo():
    ok = iv(400, 380, 420)
    levels = [
        (8, level(ok, iv(30, 29, 31))),
        (1, level(ok, iv(40, 39, 41))),
        (16, level(iv(700, 650, 1050), iv(22, 20, 24))),
        (32, level(iv(900, 850, 950), iv(14, 13, 15.5))),
        (64, level(iv(1500, 1400, 1600), iv(9, 8, 10))),
    ]
    b = cmax_bracket(levels)
    assert (b.c_max, b.below, b.above) == (16, 8, 32)
    assert b.binding == ("tps",)
    assert b.verdict_at_c_max is Verdict.UNDECIDED
    assert b.verdict_above is Verdict.UNDECIDED


def test_cmax_needs_every_lower_level_and_handles_extremes():
    ok, bad = iv(400, 380, 420), iv(2000, 1900, 2100)
    tps = iv(30, 29, 31)
    b = cmax_bracket([(1, level(ok, tps)), (2, level(bad, tps)), (4, level(ok, tps))])
    assert (b.c_max, b.below, b.above, b.binding) == (1, None, 2, ("ttft",))
    none = cmax_bracket([(1, level(bad, None))])
    assert none.c_max is None and none.binding == ("ttft", "tps")
    all_pass = cmax_bracket([(1, level(ok, tps)), (2, level(ok, tps))])
    assert (all_pass.c_max, all_pass.below, all_pass.above) == (2, 1, None)
    assert all_pass.binding == () and all_pass.verdict_above is None
