import math

import numpy as np
import pytest

from servecap.stats.capacity import users_by_littles_law
from servecap.stats.response_time import (
    check_law,
    concurrency_for_users,
    concurrency_quantile,
    mean_concurrency,
    relative_error,
    throughput,
    users_for_concurrency,
    users_for_throughput,
)


def test_law_on_round_numbers():
    # 400 users, 5 s responses, 45 s think: 8 req/s, 40 in flight.
    assert throughput(400, 5.0, 45.0) == pytest.approx(8.0)
    assert mean_concurrency(8.0, 5.0) == pytest.approx(40.0)
    assert concurrency_for_users(400, 5.0, 45.0) == pytest.approx(40.0)
    assert users_for_throughput(8.0, 5.0, 45.0) == pytest.approx(400.0)
    assert users_for_concurrency(40, 5.0, 45.0) == pytest.approx(400.0)


def test_inverses_round_trip():
    for users, r, z in [(1, 0.3, 0.0), (57, 2.5, 13.0), (1000, 10.0, 90.0)]:
        c = concurrency_for_users(users, r, z)
        assert users_for_concurrency(c, r, z) == pytest.approx(users)
        assert users_for_throughput(throughput(users, r, z), r, z) == pytest.approx(users)


def test_no_think_time_means_every_user_is_a_stream():
    assert concurrency_for_users(32, 3.0, 0.0) == pytest.approx(32.0)
    assert users_for_concurrency(32, 3.0, 0.0) == pytest.approx(32.0)


def test_capacity_headline_uses_the_same_law():
    assert users_by_littles_law(32, 3.65, 45) == round(users_for_concurrency(32, 3.65, 45))
    with pytest.raises(ValueError, match="latency"):
        users_by_littles_law(32, 0.0, 45)


def test_check_law_against_a_simulated_population():
    # Users alternate exponential think (mean 45) and fixed 5 s service with no queueing:
    # the time-average in-flight count must come out near N * R / (R + Z) = 40.
    rng = np.random.default_rng(0)
    users, horizon, busy = 400, 20_000.0, 0.0
    think_total, thinks = 0.0, 0
    for _ in range(users):
        t = 0.0
        while t < horizon:
            z = rng.exponential(45.0)
            think_total, thinks = think_total + z, thinks + 1
            t += z
            busy += max(0.0, min(5.0, horizon - t))
            t += 5.0
    check = check_law(users, 5.0, think_total / thinks, busy / horizon)
    assert abs(check.error) < 0.02
    assert check.predicted_throughput_rps == pytest.approx(8.0, rel=0.02)


def test_errors_and_signs():
    check = check_law(100, 1.0, 9.0, 11.0)
    assert check.predicted_concurrency == pytest.approx(10.0)
    assert check.error == pytest.approx(0.1)
    assert relative_error(430, 380) == pytest.approx(50 / 380)
    with pytest.raises(ValueError):
        relative_error(1, 0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: throughput(-1, 1.0, 1.0),
        lambda: throughput(10, 0.0, 0.0),
        lambda: throughput(10, math.nan, 1.0),
        lambda: mean_concurrency(1.0, -2.0),
        lambda: users_for_concurrency(4, 0.0, 10.0),
        lambda: users_for_throughput(1.0, 1.0, -5.0),
    ],
)
def test_impossible_inputs_raise(call):
    with pytest.raises(ValueError):
        call()


def test_concurrency_quantile_is_binomial():
    # N = 2, p = 1/2: P(0) = 1/4, P(<=1) = 3/4.
    assert [concurrency_quantile(2, 1.0, 1.0, q) for q in (0.2, 0.5, 0.8)] == [0, 1, 2]
    assert concurrency_quantile(10, 1.0, 0.0, 0.9) == 10  # no thinking: always all in flight
    assert concurrency_quantile(0, 1.0, 1.0, 0.9) == 0
    assert concurrency_quantile(400, 5.0, 45.0, 0.5) == 40
    assert concurrency_quantile(400, 5.0, 45.0, 0.9) == 48  # the tail a P90 SLO meets
    with pytest.raises(ValueError):
        concurrency_quantile(10, 1.0, 1.0, 1.0)


def test_concurrency_quantile_matches_a_simulated_population():
    # 200 users, exponential think mean 9 s, fixed 1 s service, no queueing: sample the
    # in-flight count on a grid and compare its 90th percentile with Binomial(200, 0.1).
    rng = np.random.default_rng(4)
    horizon, step = 5_000.0, 0.5
    grid = np.zeros(int(horizon / step))
    for _ in range(200):
        t = 0.0
        while t < horizon:
            t += rng.exponential(9.0)
            lo, hi = int(np.ceil(t / step)), int(np.ceil((t + 1.0) / step))
            grid[lo:min(hi, grid.size)] += 1
            t += 1.0
    assert np.percentile(grid, 90) == pytest.approx(concurrency_quantile(200, 1.0, 9.0, 0.9), abs=1)
