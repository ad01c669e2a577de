import math

import numpy as np
import pytest

from servecap.core.errors import SettingError, UserInputError
from servecap.workload.arrivals import ArrivalProcess


def gaps(offsets, t0=0.0):
    return np.diff(np.concatenate([[t0], offsets]))


# Gap statistics of 100,000 arrivals at 8/s with seed 7, pinned: a change here changes every
# open-loop schedule servecap sends, so it must be deliberate. Each also sits within a
# sampling error of the theory (mean 1/rate; CV 1, 0, 1/sqrt(K)).
PINNED = [
    ("poisson", 1.0, 0.124920423513456, 0.9931853408268835),
    ("constant", 1.0, 0.125, 0.0),
    ("gamma", 0.25, 0.12439447689919202, 2.002074940382999),
    ("gamma", 4.0, 0.12484932400995158, 0.49913769275041453),
]


@pytest.mark.parametrize(("process", "k", "mean", "cv"), PINNED)
def test_gap_statistics_for_a_seed(process, k, mean, cv):
    arrivals = ArrivalProcess(process, 8.0, k)
    g = gaps(arrivals.offsets(seed=7, count=100_000))
    assert g.size == 100_000
    assert g.mean() == pytest.approx(mean, rel=1e-9)
    assert g.std() / g.mean() == pytest.approx(cv, rel=1e-9, abs=1e-12)
    assert g.mean() == pytest.approx(arrivals.mean_gap, rel=0.01)
    assert g.std() / g.mean() == pytest.approx(arrivals.gap_cv, rel=0.02, abs=1e-12)


def test_gamma_with_shape_one_is_poisson_in_distribution():
    g = gaps(ArrivalProcess("gamma", 2.0, 1.0).offsets(seed=3, count=50_000))
    assert g.std() / g.mean() == pytest.approx(1.0, rel=0.02)
    assert ArrivalProcess("gamma", 2.0, 1.0).gap_cv == 1.0


def test_offsets_are_absolute_targets_from_t0():
    offsets = ArrivalProcess("constant", 4.0).offsets(seed=0, t0=100.0, count=4)
    assert offsets.tolist() == [100.25, 100.5, 100.75, 101.0]


def test_same_seed_same_schedule_and_other_seed_differs():
    a = ArrivalProcess("poisson", 5.0)
    assert np.array_equal(a.offsets(seed=1, count=1000), a.offsets(seed=1, count=1000))
    assert not np.array_equal(a.offsets(seed=1, count=1000), a.offsets(seed=2, count=1000))


def test_duration_keeps_every_arrival_before_the_end_and_agrees_with_count():
    a = ArrivalProcess("gamma", 50.0, 0.5)
    by_time = a.offsets(seed=9, t0=10.0, duration=300.0)
    assert by_time[-1] < 310.0 and by_time[0] > 10.0
    assert np.all(np.diff(by_time) >= 0)
    assert by_time.size == pytest.approx(50 * 300, rel=0.05)
    by_count = a.offsets(seed=9, t0=10.0, count=by_time.size + 1)
    assert np.array_equal(by_count[:-1], by_time)
    assert by_count[-1] >= 310.0


def test_short_schedules_are_prefixes_of_long_ones():
    a = ArrivalProcess("poisson", 3.0)
    assert np.array_equal(a.offsets(seed=4, count=10), a.offsets(seed=4, count=10_000)[:10])


def test_constant_duration_counts_exactly():
    # 0.5, 1.0, ..., 9.5: the arrival due at 10.0 is past the end.
    assert ArrivalProcess("constant", 2.0).offsets(seed=0, duration=10.0).size == 19


def test_zero_requests_is_empty():
    assert ArrivalProcess("poisson", 1.0).offsets(seed=0, count=0).size == 0


@pytest.mark.parametrize(
    ("kwargs", "setting"),
    [
        ({"process": "poisson", "rate": 0.0}, "rate"),
        ({"process": "poisson", "rate": -1.0}, "rate"),
        ({"process": "poisson", "rate": math.nan}, "rate"),
        ({"process": "gamma", "rate": 1.0, "burstiness": 0.0}, "burstiness"),
        ({"process": "weibull", "rate": 1.0}, "arrival"),
    ],
)
def test_bad_parameters_name_the_setting(kwargs, setting):
    with pytest.raises(SettingError) as caught:
        ArrivalProcess(**kwargs)
    assert caught.value.settings == (setting,)
    assert str(caught.value).startswith(f"{setting} ")


def test_bounds_must_be_exactly_one_and_sane():
    a = ArrivalProcess("poisson", 1.0)
    with pytest.raises(UserInputError, match="exactly one"):
        a.offsets(seed=0)
    with pytest.raises(UserInputError, match="exactly one"):
        a.offsets(seed=0, count=3, duration=3.0)
    with pytest.raises(UserInputError, match="duration"):
        a.offsets(seed=0, duration=0.0)
    with pytest.raises(UserInputError, match="requests"):
        a.offsets(seed=0, count=-1)
    with pytest.raises(UserInputError, match="requests"):
        ArrivalProcess("poisson", 1e9).offsets(seed=0, duration=3600.0)
