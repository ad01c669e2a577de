import math
from pathlib import Path

import numpy as np
import pytest

from servecap.core.errors import UserInputError
from servecap.workload.lengths import parse_length_spec
from servecap.workload.traces import read_trace

AZURE = Path(__file__).parent.parent / "data" / "traces" / "azure-llm-2023-conv-head2000.csv"


def draw(spec, n=20_000, seed=5, role="input"):
    return parse_length_spec(spec, role).sample(n, np.random.default_rng(seed))


def test_fixed():
    values = draw("128", 10)
    assert values.dtype == np.int64 and values.tolist() == [128] * 10
    assert parse_length_spec(" 128 ").mean == 128


def test_uniform_includes_both_ends():
    values = draw("uniform:3:6")
    assert set(values.tolist()) == {3, 4, 5, 6}
    assert values.mean() == pytest.approx(4.5, rel=0.02)


def test_normal_is_clipped_to_one():
    values = draw("normal:5:20")
    assert values.min() == 1
    assert np.mean(values == 1) > 0.3  # most of the left tail lands on the clip
    wide = draw("normal:1000:50")
    assert wide.mean() == pytest.approx(1000, rel=0.01)
    assert wide.std() == pytest.approx(50, rel=0.05)


def test_lognormal_median_and_sigma():
    values = draw("lognormal:500:0.8")
    assert np.median(values) == pytest.approx(500, rel=0.03)
    assert np.std(np.log(values)) == pytest.approx(0.8, rel=0.03)
    assert parse_length_spec("lognormal:500:0.8").mean == pytest.approx(500 * math.exp(0.32))


def test_trace_lengths_by_role():
    trace = read_trace(AZURE)
    inputs = draw(f"trace:{AZURE}", role="input")
    outputs = draw(f"trace:{AZURE}", role="output")
    assert set(inputs.tolist()) <= set(trace.input_tokens.tolist())
    assert set(outputs.tolist()) <= set(trace.output_tokens.tolist())
    assert inputs.mean() == pytest.approx(trace.input_tokens.mean(), rel=0.05)
    assert parse_length_spec(f"trace:{AZURE}", "output").mean == trace.output_tokens.mean()


def test_seeded():
    assert np.array_equal(draw("lognormal:100:1", seed=1), draw("lognormal:100:1", seed=1))
    assert not np.array_equal(draw("lognormal:100:1", seed=1), draw("lognormal:100:1", seed=2))


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("", "not a whole number"),
        ("abc", "not a whole number"),
        ("0", "not in 1.."),
        ("-5", "not in 1.."),
        ("12.5", "not a whole number"),
        ("uniform:10", "unknown form"),
        ("uniform:10:5", "LO 10 is above HI 5"),
        ("uniform:a:5", "'a' is not a whole number"),
        ("normal:100", "unknown form"),
        ("normal:0:5", "MEAN must be >= 1"),
        ("normal:100:-1", "not in 0.."),
        ("lognormal:0:1", "MEDIAN must be > 0"),
        ("lognormal:100:nan", "not in 0.."),
        ("zipf:1:2", "unknown form"),
        ("trace:", "needs a file"),
    ],
)
def test_bad_specs_give_one_clear_message(spec, why):
    with pytest.raises(UserInputError) as caught:
        parse_length_spec(spec, "output")
    message = str(caught.value)
    assert message.startswith(f"--output-tokens {spec.strip()!r}: ")
    assert why in message and "uniform:LO:HI" in message


def test_missing_trace_file_is_user_input(tmp_path):
    with pytest.raises(UserInputError, match="cannot read the trace"):
        parse_length_spec(f"trace:{tmp_path / 'nope.csv'}")
