import math

import numpy as np
import pytest

from servecap.stats import bootstrap
from servecap.stats.bootstrap import (
    METHOD,
    bootstrap_interval,
    bootstrap_intervals,
    metric_intervals,
)
from servecap.stats.percentiles import describe

Z90 = 1.2815515655446004  # standard normal 90th percentile


def coverage(draw, truth, stat, higher_is_better=False, trials=200, n=200):
    hits = 0
    for trial in range(trials):
        values = draw(np.random.default_rng(1000 + trial), n)
        iv = bootstrap_interval(values, stat, higher_is_better=higher_is_better, seed=trial)
        hits += iv.contains(truth)
    return hits / trials


def test_mean_interval_covers_true_mean_at_nominal_rate():
    rate = coverage(lambda rng, n: rng.exponential(1.0, n), 1.0, "mean")
    assert 0.90 <= rate <= 0.99


@pytest.mark.slow
def test_p90_interval_covers_true_tail_at_nominal_rate():
    rate = coverage(lambda rng, n: rng.exponential(1.0, n), math.log(10), "p90")
    assert 0.90 <= rate <= 0.99


@pytest.mark.slow
def test_tps_p90_interval_covers_the_low_tail():
    # P90 of a higher-is-better metric is its 10th percentile: 50 - 1.28 * 10 here.
    truth = 50.0 - Z90 * 10.0
    rate = coverage(lambda rng, n: rng.normal(50.0, 10.0, n), truth, "p90", higher_is_better=True)
    assert 0.90 <= rate <= 0.99


def test_estimate_matches_describe_and_lies_inside():
    values = np.random.default_rng(3).lognormal(3.0, 0.6, 500)
    for hib in (False, True):
        ivs = bootstrap_intervals(values, ("mean", "p50", "p90", "p99"), higher_is_better=hib)
        ref = describe(values, higher_is_better=hib)
        for stat, iv in ivs.items():
            assert iv.estimate == pytest.approx(ref[stat])
            assert iv.low <= iv.estimate <= iv.high
            assert iv.n == 500 and iv.resamples == 1000 and iv.method == METHOD


def test_seeded_and_deterministic():
    values = np.random.default_rng(5).exponential(2.0, 300)
    a = bootstrap_interval(values, "p90", seed=7)
    assert a == bootstrap_interval(values, "p90", seed=7)
    assert a != bootstrap_interval(values, "p90", seed=8)


def test_width_shrinks_with_more_samples_and_grows_with_confidence():
    rng = np.random.default_rng(9)
    small = bootstrap_interval(rng.normal(0, 1, 100), "mean")
    large = bootstrap_interval(rng.normal(0, 1, 10_000), "mean")
    assert (large.high - large.low) < (small.high - small.low) / 5
    values = rng.normal(0, 1, 400)
    narrow = bootstrap_interval(values, "mean", confidence=0.5)
    wide = bootstrap_interval(values, "mean", confidence=0.99)
    assert wide.low < narrow.low < narrow.high < wide.high


@pytest.mark.slow
def test_chunking_does_not_change_the_result(monkeypatch):
    # 10,000 values x 1,000 resamples spans several internal chunks; one big chunk agrees.
    values = np.random.default_rng(11).exponential(1.0, 10_000)
    chunked = bootstrap_intervals(values, ("mean", "p90"))
    monkeypatch.setattr(bootstrap, "_CHUNK_ELEMENTS", 1 << 30)
    assert bootstrap_intervals(values, ("mean", "p90")) == chunked
    assert chunked["p90"].high - chunked["p90"].low < 0.2


def test_partial_sort_percentiles_equal_numpy():
    samples = np.random.default_rng(2).normal(0, 1, (37, 53))
    qs = [1.0, 10.0, 50.0, 90.0, 99.0, 100.0, 0.0]
    expected = np.percentile(samples, qs, axis=-1, method="linear")
    np.testing.assert_allclose(bootstrap._linear_percentiles(samples, qs), expected)


def test_edge_cases():
    assert bootstrap_intervals([], ("mean", "p99")) == {"mean": None, "p99": None}
    one = bootstrap_interval([4.0], "p90")
    assert (one.low, one.estimate, one.high) == (4.0, 4.0, 4.0)
    assert bootstrap_interval([1.0, 2.0], "mean").as_dict()["method"] == METHOD


@pytest.mark.parametrize(
    "kwargs",
    [{"stats": ("p95",)}, {"confidence": 1.0}, {"confidence": 0.0}, {"resamples": 0}],
)
def test_bad_arguments_raise(kwargs):
    with pytest.raises(ValueError):
        bootstrap_intervals([1.0, 2.0, 3.0], **kwargs)


def test_non_finite_values_raise():
    with pytest.raises(ValueError, match="finite"):
        bootstrap_interval([1.0, float("nan")])


def test_metric_intervals_per_level():
    rng = np.random.default_rng(12)
    ttft = rng.lognormal(5.0, 0.4, 300)
    tps = rng.normal(40.0, 5.0, 300)
    out = metric_intervals({"ttft": ttft, "tps": tps, "latency": []}, higher_is_better={"tps"})
    assert set(out) == {"ttft", "tps", "latency"} and out["latency"] == {"mean": None, "p90": None}
    assert out["tps"]["p90"] == bootstrap_interval(tps, "p90", higher_is_better=True)
    assert out["tps"]["p90"].estimate < out["tps"]["mean"].estimate  # low tail for TPS
    assert out["ttft"]["p90"].estimate > out["ttft"]["mean"].estimate
