import math
import random
import statistics

import pytest

from servecap.core.errors import SettingError, UserInputError
from servecap.workload.think_time import ThinkTime, TurnCount, parse_think_time, parse_turns


def draws(spec, n=20_000, seed=0):
    rng = random.Random(seed)
    think = parse_think_time(spec)
    return think, [think.sample(rng) for _ in range(n)]


def test_exponential_mean_and_shape():
    think, xs = draws("exp:45")
    assert think == ThinkTime("exp", (45.0,)) and think.mean_s == 45.0
    assert statistics.fmean(xs) == pytest.approx(45.0, rel=0.03)
    # Memoryless: the median is mean * ln 2, not the mean.
    assert statistics.median(xs) == pytest.approx(45.0 * math.log(2), rel=0.04)
    assert min(xs) >= 0


def test_fixed_and_bare_number():
    assert parse_think_time("fixed:3") == parse_think_time("3") == ThinkTime("fixed", (3.0,))
    _, xs = draws("fixed:2.5", n=10)
    assert xs == [2.5] * 10
    assert parse_think_time("exp:0").sample(random.Random(1)) == 0.0


def test_lognormal_median_and_mean():
    think, xs = draws("lognormal:20:0.8")
    assert statistics.median(xs) == pytest.approx(20.0, rel=0.04)
    assert think.mean_s == pytest.approx(20.0 * math.exp(0.32))
    assert statistics.fmean(xs) == pytest.approx(think.mean_s, rel=0.04)


def test_uniform_bounds_and_mean():
    think, xs = draws("uniform:5:10")
    assert min(xs) >= 5.0 and max(xs) <= 10.0
    assert think.mean_s == 7.5
    assert statistics.fmean(xs) == pytest.approx(7.5, rel=0.01)


def test_seeded_sequences_repeat():
    assert draws("exp:10", n=50, seed=3)[1] == draws("exp:10", n=50, seed=3)[1]
    assert draws("exp:10", n=50, seed=3)[1] != draws("exp:10", n=50, seed=4)[1]


def test_spec_text_is_normalised():
    assert str(parse_think_time(" EXP:45 ")) == "exp:45"
    assert str(parse_think_time("uniform:1.5:3")) == "uniform:1.5:3"
    for spec in ("exp:45.123456789", "lognormal:0.1:0.35", "fixed:1e-7"):
        assert parse_think_time(str(parse_think_time(spec))) == parse_think_time(spec)


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("", "not understood"),
        ("soon", "not understood"),
        ("normal:3:1", "not understood"),
        ("exp", "exp takes 1 value, as exp:MEAN"),
        ("exp:1:2", "exp takes 1 value"),
        ("lognormal:3", "lognormal takes 2 values, as lognormal:MEDIAN:SIGMA"),
        ("exp:abc", "'abc' is not a number"),
        ("exp:-1", "must not be negative"),
        ("-5", "must not be negative"),
        ("uniform:-1:3", "must not be negative"),
        ("lognormal:20:-0.5", "must not be negative"),
        ("exp:nan", "finite"),
        ("fixed:inf", "finite"),
        ("lognormal:0:1", "MEDIAN must be above 0"),
        ("uniform:9:3", "LO must not exceed HI"),
    ],
)
def test_bad_think_time_is_one_clear_user_error(spec, fragment):
    with pytest.raises(UserInputError) as err:
        parse_think_time(spec)
    assert fragment in str(err.value)
    assert repr(spec.strip()) in str(err.value)
    assert "\n" not in str(err.value)


def test_the_setting_goes_into_the_message_for_each_front_end_to_name():
    with pytest.raises(SettingError, match=r"^think time 'exp:-2'") as caught:
        parse_think_time("exp:-2", name="think_time")
    assert caught.value.named(lambda s: "--think-time").startswith("--think-time 'exp:-2'")


def test_turns_fixed_and_uniform():
    assert parse_turns("3") == TurnCount(3, 3)
    assert parse_turns("3").sample(random.Random(0)) == 3
    turns = parse_turns("uniform:2:8")
    rng = random.Random(0)
    counts = [turns.sample(rng) for _ in range(5000)]
    assert set(counts) == set(range(2, 9))
    assert turns.mean == 5.0 and str(turns) == "uniform:2:8"


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("0", "at least 1 turn"),
        ("-2", "at least 1 turn"),
        ("2.5", "not understood"),
        ("many", "not understood"),
        ("uniform:2", "not understood"),
        ("exp:3", "not understood"),
        ("uniform:0:4", "at least 1 turn"),
        ("uniform:8:2", "LO must not exceed HI"),
    ],
)
def test_bad_turns_are_user_errors(spec, fragment):
    with pytest.raises(UserInputError, match=fragment):
        parse_turns(spec)


@pytest.mark.parametrize("spec", ["exp:45", "fixed:2.5", "lognormal:20:0.8", "uniform:5:10"])
def test_residual_is_the_time_left_of_a_think_caught_at_random(spec):
    # Renewal theory, checked against the distribution's own sampler: the time left of a think
    # seen at a random moment has P(R <= t) = E[min(X, t)] / E[X].
    think, xs = draws(spec, n=40_000, seed=5)
    rng = random.Random(6)
    residuals = [think.sample_residual(rng) for _ in range(40_000)]
    mean_x = statistics.fmean(xs)
    for t in (0.25 * mean_x, mean_x, 2.0 * mean_x):
        expected = statistics.fmean(min(x, t) for x in xs) / mean_x
        seen = sum(r <= t for r in residuals) / len(residuals)
        assert seen == pytest.approx(expected, abs=0.015), (spec, t)
    assert min(residuals) >= 0.0


def test_residual_of_no_think_is_zero():
    assert parse_think_time("exp:0").sample_residual(random.Random(1)) == 0.0
