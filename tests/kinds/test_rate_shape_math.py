"""The rate shape kind's own math: parsing, rate values, exact integrals, thinning statistics."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from servecap.core.errors import UserInputError
from servecap.kinds.rate_shape import RateShape, parse_shape, shape_offsets_s

SEEDS = range(200)


def write_csv(tmp_path: Path, body: str, name: str = "rates.csv") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


# --- parsing ---------------------------------------------------------------------------------


def test_ramp_parses() -> None:
    shape = parse_shape("ramp:1:20:60s")
    assert shape.text == "ramp:1:20:60s"
    assert shape.duration_s == 60.0
    assert shape.peak() == 20.0


@pytest.mark.parametrize(
    ("text", "duration"),
    [
        ("ramp:1:2:90", 90.0),
        ("ramp:1:2:90s", 90.0),
        ("ramp:1:2:2m", 120.0),
        ("ramp:1:2:1h", 3600.0),
        ("ramp:1:2:0.5s", 0.5),
        ("ramp:1:2:1.5m", 90.0),
    ],
)
def test_duration_suffixes(text: str, duration: float) -> None:
    assert parse_shape(text).duration_s == duration


def test_ramp_constant_allowed() -> None:
    shape = parse_shape("ramp:5:5:10s")
    assert shape.rate_at(0.0) == shape.rate_at(9.9) == 5.0
    assert shape.expected_requests() == 50.0


def test_steps_parses() -> None:
    shape = parse_shape("steps:2,5,10:30s")
    assert shape.duration_s == 90.0
    assert shape.peak() == 10.0


def test_sine_parses_with_and_without_duration() -> None:
    shape = parse_shape("sine:10:5:120s:600s")
    assert shape.duration_s == 600.0
    assert shape.sine == (10.0, 5.0, 120.0)
    assert shape.peak() == 15.0
    assert parse_shape("sine:10:5:2m").duration_s == 120.0


def test_sine_zero_amplitude_is_constant() -> None:
    shape = parse_shape("sine:4:0:60s")
    assert shape.rate_at(15.0) == 4.0
    assert shape.peak() == 4.0


def test_sine_peak_when_duration_ends_before_the_crest() -> None:
    # 10 s of a 120 s period: the crest (at 30 s) is never reached
    shape = parse_shape("sine:10:5:120s:10s")
    assert shape.peak() == pytest.approx(10 + 5 * math.sin(2 * math.pi * 10 / 120))


def test_csv_with_header_and_prefix(tmp_path: Path) -> None:
    path = write_csv(tmp_path, "second,rate\n0,3\n1,4.5\n2,1\n")
    shape = parse_shape(f"csv:{path}")
    assert shape.duration_s == 3.0
    assert shape.peak() == 4.5


def test_csv_bare_path_without_header_relative_to_base_dir(tmp_path: Path) -> None:
    write_csv(tmp_path, "0,3\n1,4\n\n", name="day.csv")
    shape = parse_shape("day.csv", base_dir=tmp_path)
    assert shape.text == "day.csv"
    assert shape.duration_s == 2.0


def test_csv_tolerates_bom_quotes_spaces_and_whole_float_seconds(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text('\ufeff"second","rate"\r\n 0 , 2\r\n1.0,"3"\r\n', encoding="utf-8")
    shape = parse_shape(str(path))
    assert [shape.rate_at(0.5), shape.rate_at(1.5)] == [2.0, 3.0]


def test_shapes_are_frozen_and_hashable() -> None:
    a, b = parse_shape("steps:2,5:30s"), parse_shape("steps:2,5:30s")
    assert a == b
    assert hash(a) == hash(b)
    assert len({a, b, parse_shape("sine:10:5:120s")}) == 2
    with pytest.raises(AttributeError):
        a.duration_s = 1.0  # type: ignore[misc]


# --- parse errors ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ramp:1:x:60s", "invalid rate shape 'ramp:1:x:60s': 'x' is not a rate (requests/s > 0)"),
        ("steps:2,0:30s", "invalid rate shape 'steps:2,0:30s': a rate must be > 0 requests/s"),
        (
            "wave:1:2",
            "invalid rate shape 'wave:1:2': unknown shape 'wave' "
            "(ramp, steps, sine or a .csv file)",
        ),
        ("ramp:0:5:60s", "a rate must be > 0 requests/s"),
        ("ramp:5:-1:60s", "a rate must be > 0 requests/s"),
        ("ramp:inf:5:60s", "'inf' is not a rate"),
        ("ramp:1:nan:60s", "'nan' is not a rate"),
        ("ramp:1:20", "ramp takes R0:R1:DUR"),
        ("ramp:1:20:60s:9", "ramp takes R0:R1:DUR"),
        ("ramp:1:20:0s", "'0s' is not a duration > 0"),
        ("ramp:1:20:-5", "'-5' is not a duration > 0"),
        ("ramp:1:20:10d", "'10d' is not a duration > 0"),
        ("ramp:1:20:", "'' is not a duration > 0"),
        ("steps:2,,5:30s", "'' is not a rate"),
        ("steps:2,5", "steps takes R1,R2,...:STEP"),
        ("steps:2,-3:30s", "a rate must be > 0 requests/s"),
        ("sine:10:5", "sine takes MEAN:AMP:PERIOD[:DUR]"),
        ("sine:10:10:60s", "the amplitude must be < the mean"),
        ("sine:10:12:60s", "the amplitude must be < the mean"),
        ("sine:10:-1:60s", "'-1' is not an amplitude"),
        ("sine:0:0:60s", "a rate must be > 0 requests/s"),
        ("sine:10:5:0s", "'0s' is not a duration > 0"),
        ("", "unknown shape ''"),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(UserInputError) as info:
        parse_shape(text)
    assert message in str(info.value)
    assert str(info.value).startswith(f"invalid rate shape '{text}': ")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "second,rate\n0,1\n1,2\n2,3\n3,4\n4,5\nabc,6\n",
            "rates.csv line 7: 'abc' is not a number",
        ),
        ("0,1\n1,2\n2,3\n3,4\n6,5\n", "rates.csv line 5: second 4 expected, found 6 (a gap)"),
        ("0,1\n1,2\n1,3\n", "rates.csv line 3: second 2 expected, found 1 (out of order"),
        ("0,1\n1,2\n2,0\n", "rates.csv line 3: a rate must be > 0 requests/s"),
        ("0,1\n1,-2\n", "rates.csv line 2: a rate must be > 0 requests/s"),
        ("0,1\n1,inf\n", "rates.csv line 2: 'inf' is not a number"),
        ("0,1\n0.5,2\n", "rates.csv line 2: '0.5' is not a whole second"),
        ("1,1\n", "rates.csv line 1: second 0 expected, found 1 (a gap)"),
        ("0,1\n1,2,3\n", "rates.csv line 2: expected 'second,rate', found 3 cells"),
        ("0,1\n1\n", "rates.csv line 2: expected 'second,rate', found 1 cells"),
        ("0,abc\n", "rates.csv line 1: 'abc' is not a number"),
        ("", "rates.csv: empty file"),
        ("\n  \n", "rates.csv: empty file"),
        ("second,rate\n", "rates.csv: empty file"),
    ],
)
def test_csv_errors(tmp_path: Path, body: str, message: str) -> None:
    write_csv(tmp_path, body)
    with pytest.raises(UserInputError, match="^" + re.escape(message)):
        parse_shape("csv:rates.csv", base_dir=tmp_path)


def test_csv_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="not found") as info:
        parse_shape("nope.csv", base_dir=tmp_path)
    assert str(tmp_path / "nope.csv") in str(info.value)


def test_csv_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(UserInputError, match=re.escape("dir.csv")):
        parse_shape("dir.csv", base_dir=tmp_path)


def test_csv_binary_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "bin.csv").write_bytes(b"\xff\xfe\x00\x81")
    with pytest.raises(UserInputError, match="not UTF-8"):
        parse_shape("bin.csv", base_dir=tmp_path)


# --- rate_at ---------------------------------------------------------------------------------


def test_ramp_rate_at() -> None:
    shape = parse_shape("ramp:1:20:60s")
    assert shape.rate_at(0.0) == 1.0
    assert shape.rate_at(30.0) == pytest.approx(10.5)
    assert shape.rate_at(45.0) == pytest.approx(1 + 19 * 0.75)
    assert shape.rate_at(59.999) == pytest.approx(20.0, abs=1e-3)


def test_ramp_down_rate_at() -> None:
    assert parse_shape("ramp:20:1:60s").rate_at(15.0) == pytest.approx(20 - 19 * 0.25)


def test_steps_rate_at() -> None:
    shape = parse_shape("steps:2,5,10:30s")
    assert [shape.rate_at(t) for t in (0.0, 29.99, 30.0, 59.99, 60.0, 89.99)] == [
        2.0,
        2.0,
        5.0,
        5.0,
        10.0,
        10.0,
    ]


def test_sine_rate_at() -> None:
    shape = parse_shape("sine:10:5:120s:600s")
    assert shape.rate_at(0.0) == pytest.approx(10.0)
    assert shape.rate_at(30.0) == pytest.approx(15.0)
    assert shape.rate_at(90.0) == pytest.approx(5.0)
    assert shape.rate_at(150.0) == pytest.approx(15.0)
    assert shape.rate_at(20.0) == pytest.approx(10 + 5 * math.sin(2 * math.pi * 20 / 120))


def test_csv_rate_at_uses_floor_of_t(tmp_path: Path) -> None:
    shape = parse_shape(str(write_csv(tmp_path, "0,3\n1,7\n2,1.5\n")))
    assert [shape.rate_at(t) for t in (0.0, 0.99, 1.0, 1.5, 2.0, 2.999)] == [
        3.0,
        3.0,
        7.0,
        7.0,
        1.5,
        1.5,
    ]


@pytest.mark.parametrize("t", [-0.001, 60.0, 61.0])
def test_rate_at_outside_the_shape_is_a_bug(t: float) -> None:
    with pytest.raises(ValueError, match="outside"):
        parse_shape("ramp:1:20:60s").rate_at(t)


# --- exact integrals -------------------------------------------------------------------------


def test_expected_requests_ramp() -> None:
    shape = parse_shape("ramp:1:20:60s")
    assert shape.expected_requests() == pytest.approx((1 + 20) / 2 * 60)
    assert shape.expected_requests() / shape.duration_s == pytest.approx(10.5)


def test_expected_requests_steps() -> None:
    shape = parse_shape("steps:2,5,10:30s")
    assert shape.expected_requests() == pytest.approx((2 + 5 + 10) * 30)
    assert shape.expected_requests() / shape.duration_s == pytest.approx(17 / 3)


@pytest.mark.parametrize("text", ["sine:10:5:120s:600s", "sine:10:5:120s", "sine:3:2.5:7s:70s"])
def test_expected_requests_sine_whole_periods(text: str) -> None:
    shape = parse_shape(text)
    mean = shape.sine[0] if shape.sine else math.nan
    assert shape.expected_requests() == pytest.approx(mean * shape.duration_s)
    assert shape.expected_requests() / shape.duration_s == pytest.approx(mean)


def test_expected_requests_sine_quarter_period() -> None:
    # integral of 10 + 5 sin(2 pi t / 120) over [0, 30] = 300 + 5 * 120 / (2 pi)
    shape = parse_shape("sine:10:5:120s:30s")
    assert shape.expected_requests() == pytest.approx(300 + 5 * 120 / (2 * math.pi))


def test_expected_requests_csv(tmp_path: Path) -> None:
    shape = parse_shape(str(write_csv(tmp_path, "second,rate\n0,3\n1,7\n2,1.5\n3,0.25\n")))
    assert shape.expected_requests() == pytest.approx(3 + 7 + 1.5 + 0.25)
    assert shape.expected_requests() / shape.duration_s == pytest.approx(11.75 / 4)


# --- thinning --------------------------------------------------------------------------------


@pytest.fixture(params=["ramp:1:20:60s", "steps:2,5,10:30s", "sine:10:5:120s:240s", "csv"])
def shape(request: pytest.FixtureRequest, tmp_path: Path) -> RateShape:
    if request.param == "csv":
        rows = "".join(f"{i},{1 + (i * 7) % 13}\n" for i in range(40))
        return parse_shape(str(write_csv(tmp_path, "second,rate\n" + rows)))
    return parse_shape(str(request.param))


def test_offsets_sorted_within_duration(shape: RateShape) -> None:
    for seed in range(20):
        offsets = shape_offsets_s(shape, seed)
        assert offsets.dtype == np.float64
        assert np.all(np.diff(offsets) >= 0)
        assert offsets.size == 0 or (offsets[0] >= 0 and offsets[-1] < shape.duration_s)


def test_offsets_deterministic_per_seed(shape: RateShape) -> None:
    np.testing.assert_array_equal(shape_offsets_s(shape, 7), shape_offsets_s(shape, 7))
    assert not np.array_equal(shape_offsets_s(shape, 7), shape_offsets_s(shape, 8))


def test_mean_count_matches_expected_requests(shape: RateShape) -> None:
    counts = np.array([shape_offsets_s(shape, seed).size for seed in SEEDS])
    expected = shape.expected_requests()
    # Each count is Poisson(expected), variance = expected, so the mean of n counts has
    # standard error sqrt(expected / n). 3 standard errors: a correct sampler falls outside
    # with probability ~0.3%, while a wrong peak or acceptance rule shifts the mean by far more.
    tolerance = 3 * math.sqrt(expected / len(SEEDS))
    assert abs(counts.mean() - expected) < tolerance


def test_counts_follow_the_ramp_in_first_and_last_thirds() -> None:
    shape = parse_shape("ramp:1:20:60s")
    third = shape.duration_s / 3
    r1, r2 = shape.rate_at(third), shape.rate_at(2 * third)
    want_first = (shape.rate_at(0.0) + r1) / 2 * third  # ~83.3 requests
    want_last = (r2 + 20.0) / 2 * third  # ~336.7 requests
    offsets = [shape_offsets_s(shape, seed) for seed in SEEDS]
    first = np.array([np.count_nonzero(o < third) for o in offsets])
    last = np.array([np.count_nonzero(o >= 2 * third) for o in offsets])
    # Arrivals in a window form a Poisson count whose mean is the rate's integral over it, so
    # the mean over n seeds has standard error sqrt(integral / n); 3 of them (~0.3% false
    # alarms for a correct sampler) still separates 83 from 337 by a wide margin.
    for got, want in ((first, want_first), (last, want_last)):
        assert abs(got.mean() - want) < 3 * math.sqrt(want / len(SEEDS))


@pytest.mark.slow
def test_large_shape_uses_several_chunks_and_stays_deterministic() -> None:
    shape = parse_shape("ramp:10000:30000:200s")  # ~4M candidates, several chunks
    a, b = shape_offsets_s(shape, 3), shape_offsets_s(shape, 3)
    np.testing.assert_array_equal(a, b)
    assert np.all(np.diff(a) >= 0)
    # one draw of Poisson(4e6): standard deviation 2000, so 5 sd (10,000) is a loose bound
    assert abs(a.size - shape.expected_requests()) < 5 * math.sqrt(shape.expected_requests())


def test_max_arrivals_exceeded_is_user_input_error() -> None:
    shape = parse_shape("ramp:100:100:100s")  # ~10,000 requests
    with pytest.raises(UserInputError, match="more than 1000 requests"):
        shape_offsets_s(shape, 0, max_arrivals=1000)
    assert shape_offsets_s(shape, 0, max_arrivals=20_000).size > 1000
