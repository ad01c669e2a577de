import random

import pytest

from servecap.stats.search import (
    BoundarySearch,
    SearchStatus,
    cmax_search,
    drive,
    users_search,
)


def below(boundary):
    return lambda level: level <= boundary


def test_cmax_bisects_to_adjacent_integers():
    result = drive(cmax_search(32, 64, budget=8), below(45))
    assert result.status is SearchStatus.CONVERGED
    assert (result.lower, result.upper, result.found) == (45, 46, 45)
    assert [p.level for p in result.probes] == [48, 40, 44, 46, 45]


def test_cmax_budget_spent_keeps_the_bracket_and_every_probe():
    result = drive(cmax_search(32, 64, budget=2), below(45))
    assert result.status is SearchStatus.BUDGET_SPENT
    assert (result.lower, result.upper, result.found) == (40, 48, 40)
    assert len(result.probes) == 2
    assert "budget spent" in result.message


def test_cmax_already_adjacent_needs_no_probe():
    search = cmax_search(8, 9, budget=5)
    assert search.next_probe() is None
    assert search.result().status is SearchStatus.CONVERGED


def test_cmax_from_nothing_passing():
    result = drive(cmax_search(0, 4, budget=8), below(0))
    assert result.status is SearchStatus.NOTHING_PASSES and result.found is None
    assert drive(cmax_search(0, 4, budget=8), below(2)).found == 2


def test_users_brackets_down_then_bisects_within_tolerance():
    result = drive(users_search(400), below(337))
    assert result.status is SearchStatus.CONVERGED
    assert result.lower <= 337 < result.upper
    assert result.upper - result.lower <= 0.05 * result.lower
    assert result.probes[0].level == 400 and not result.probes[0].passed


def test_users_brackets_up_when_the_prediction_passes():
    result = drive(users_search(100, tolerance=0.0, budget=20), below(260))
    assert [p.level for p in result.probes][:3] == [100, 200, 400]
    assert (result.lower, result.upper) == (260, 261)


@pytest.mark.parametrize("seed", range(40))
def test_search_always_brackets_the_true_boundary(seed):
    rng = random.Random(seed)
    boundary = rng.randint(0, 3000)
    tol = rng.choice([0.0, 0.02, 0.05, 0.2])
    result = drive(users_search(rng.randint(1, 2000), tolerance=tol, budget=40), below(boundary))
    passes = [p.level for p in result.probes if p.passed]
    fails = [p.level for p in result.probes if not p.passed]
    assert not passes or not fails or max(passes) < min(fails)
    if boundary == 0:
        assert result.status is SearchStatus.NOTHING_PASSES
        return
    assert result.status is SearchStatus.CONVERGED
    assert result.lower <= boundary < result.upper
    assert result.upper - result.lower <= max(1, tol * result.lower)


def test_not_found_within_budget_is_a_result():
    up = drive(users_search(400, budget=3), below(10**9))
    assert up.status is SearchStatus.NOT_FOUND and up.found is None
    assert up.lower == 1600 and "up to 1600" in up.message
    down = drive(users_search(4000, budget=2), below(10))
    assert down.status is SearchStatus.NOT_FOUND and down.upper == 2000
    assert "down to 2000" in down.message


def test_maximum_caps_growth():
    result = drive(users_search(300, maximum=500, budget=10), below(10**9))
    assert [p.level for p in result.probes] == [300, 500]
    assert result.status is SearchStatus.NOT_FOUND and result.lower == 500


def test_nothing_passes_down_to_one():
    result = drive(users_search(8), below(0))
    assert [p.level for p in result.probes] == [8, 4, 2, 1]
    assert result.status is SearchStatus.NOTHING_PASSES
    assert "not even 1" in result.message


def test_protocol_is_idempotent_and_strict():
    search = users_search(50)
    assert search.next_probe() == 50 and search.next_probe() == 50
    with pytest.raises(ValueError, match="pending"):
        search.record(49, True)
    search.record(50, True)
    assert search.next_probe() == 100


def test_zero_budget_reports_the_given_bracket():
    result = drive(cmax_search(16, 32, budget=0), below(20))
    assert result.probes == () and result.status is SearchStatus.BUDGET_SPENT


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"lower": 5, "upper": 5},
        {"start": 0},
        {"start": 10, "tolerance": -0.1},
        {"start": 10, "budget": -1},
        {"start": 10, "factor": 1.0},
        {"start": 10, "maximum": 5},
        {"lower": -3, "upper": 4},
    ],
)
def test_bad_arguments_raise(kwargs):
    with pytest.raises(ValueError):
        BoundarySearch(**kwargs)
