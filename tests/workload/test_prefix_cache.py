from pathlib import Path

import pytest

from servecap.core.errors import UserInputError
from servecap.workload.prefix_cache import implied_hit_rate, trace_hit_rate
from servecap.workload.traces import read_trace

DATA = Path(__file__).parent.parent / "data" / "traces"
MOONCAKE = DATA / "mooncake-conversation-head2000.jsonl"
AZURE = DATA / "azure-llm-2023-conv-head2000.csv"


def test_hits_are_the_cached_leading_run_in_tokens():
    # r0 misses all; r1 shares block 0 (512); r2 repeats r0 whole but its last block is
    # capped at its prompt length minus one token; r3 matches block 1 only in the middle.
    blocks = [[0, 1, 2], [0, 7], [0, 1, 2], [9, 1]]
    tokens = [1500, 1000, 1500, 1024]
    rate = implied_hit_rate(blocks, tokens)
    assert rate.query_tokens == 5024 and rate.requests == 4
    assert rate.hit_tokens == 0 + 512 + 1499 + 0
    assert rate.rate == pytest.approx(2011 / 5024)


def test_chain_not_block_ids_decides():
    # id 1 after id 5 is another block than id 1 after id 0
    assert implied_hit_rate([[0, 1], [5, 1]], [1024, 1024]).hit_tokens == 0


def test_granularity_floors_each_hit():
    assert implied_hit_rate([[0, 1], [0, 1]], [1000, 1000], granularity=16).hit_tokens == 992


def test_lru_capacity_evicts_the_oldest():
    blocks = [[0], [1], [2], [0]]
    assert implied_hit_rate(blocks, [600] * 4).hit_tokens == 512
    assert implied_hit_rate(blocks, [600] * 4, cache_blocks=2).hit_tokens == 0
    assert implied_hit_rate(blocks, [600] * 4, cache_blocks=3).hit_tokens == 512


def test_mooncake_slice_reuses_a_large_share():
    trace = read_trace(MOONCAKE)
    rate = implied_hit_rate((trace.block_ids(i) for i in range(len(trace))), trace.input_tokens)
    assert rate.query_tokens == int(trace.input_tokens.sum())
    assert 0.1 < rate.rate < 0.9
    bounded = implied_hit_rate(
        (trace.block_ids(i) for i in range(len(trace))), trace.input_tokens, cache_blocks=100
    )
    assert bounded.hit_tokens < rate.hit_tokens


def test_trace_hit_rate_matches_and_needs_block_ids():
    trace = read_trace(MOONCAKE).window(0.0, 60.0)
    direct = implied_hit_rate(
        [trace.block_ids(i).tolist() for i in range(len(trace))], trace.input_tokens.tolist()
    )
    assert trace_hit_rate(trace) == direct
    assert trace_hit_rate(trace, granularity=16).hit_tokens <= direct.hit_tokens
    with pytest.raises(UserInputError, match="no prefix block ids"):
        trace_hit_rate(read_trace(AZURE))


def test_empty_and_mismatched_inputs():
    assert implied_hit_rate([], []).rate == 0.0
    with pytest.raises(ValueError):
        implied_hit_rate([[0]], [1, 2])
