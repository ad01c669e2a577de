import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servecap.workload.arrivals import ArrivalProcess
from servecap.workload.lengths import parse_length_spec
from servecap.workload.text import blocks_text, request_text

processes = st.sampled_from(["poisson", "constant", "gamma"])


@settings(max_examples=60, deadline=None)
@given(processes, st.floats(0.01, 1000), st.floats(0.05, 20), st.integers(0, 2**32),
       st.integers(0, 3000), st.floats(-1e6, 1e6))
def test_offsets_are_ordered_after_t0(process, rate, k, seed, count, t0):
    offsets = ArrivalProcess(process, rate, k).offsets(seed=seed, t0=t0, count=count)
    assert offsets.size == count
    assert np.all(np.diff(offsets) >= 0) and np.all(offsets >= t0)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["normal:{a}:{b}", "lognormal:{a}:{b}", "uniform:{a}:{c}"]),
       st.integers(1, 100_000), st.floats(0, 5), st.integers(0, 2**32))
@pytest.mark.slow
def test_lengths_are_whole_and_at_least_one(template, a, b, seed):
    spec = template.format(a=a, b=round(b, 3), c=a + int(b * 100))
    values = parse_length_spec(spec).sample(500, np.random.default_rng(seed))
    assert values.dtype == np.int64 and values.min() >= 1


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**9), st.integers(1, 40_000))
def test_texts_hold_four_characters_a_token(index, tokens):
    assert len(request_text(index, tokens)) == 4 * tokens
    ids = list(range(index % 50, index % 50 + (tokens + 511) // 512))
    assert len(blocks_text(ids, tokens, index)) == 4 * tokens
