import pytest

from servecap.stats.percentiles import describe, small_sample_warnings, tail_quantile


def test_linear_interpolation_and_mean():
    stats = describe([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0])
    assert stats["mean"] == pytest.approx(5.5)
    assert stats["p50"] == pytest.approx(5.5)
    assert stats["p90"] == pytest.approx(9.1)
    assert stats["p99"] == pytest.approx(9.91)


def test_tps_tail_is_the_low_side():
    stats = describe([10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 100.0],
                     higher_is_better=True)
    assert stats["p90"] == pytest.approx(19.0)  # the 10th percentile
    assert stats["p99"] == pytest.approx(10.9)  # the 1st percentile
    assert tail_quantile("p90", True) == 10.0
    assert tail_quantile("p90", False) == 90.0


def test_empty_gives_none():
    assert describe([]) == {"mean": None, "p50": None, "p90": None, "p99": None}


def test_small_samples_warn():
    assert any("P90" in w for w in small_sample_warnings(5))
    assert small_sample_warnings(200) == []


def test_too_few_samples_rule_is_20_for_p90_and_200_for_p99():
    def stats(n):
        return [w.split()[0] for w in small_sample_warnings(n)]

    assert stats(19) == ["P90", "P99"]
    assert stats(20) == ["P99"]
    assert stats(199) == ["P99"]
    assert stats(200) == []
    assert stats(0) == []
    assert "19 successful requests" in small_sample_warnings(19)[0]
