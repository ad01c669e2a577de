from pathlib import Path

import numpy as np
import pytest

from servecap.core.errors import UserInputError
from servecap.workload.datasets import read_dataset
from servecap.workload.lengths import parse_length_spec
from servecap.workload.sources import DatasetSource, SyntheticSource, TraceSource
from servecap.workload.text import (
    BLOCK_CHARS,
    SharedPrefixes,
    block_text,
    blocks_text,
    filler,
    pool,
    request_text,
)
from servecap.workload.traces import read_trace

DATA = Path(__file__).parent.parent / "data" / "traces"
MOONCAKE = DATA / "mooncake-conversation-head2000.jsonl"
AZURE = DATA / "azure-llm-2023-conv-head2000.csv"


def common_prefix(a, b):
    """Characters `a` and `b` share from the start."""
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def test_request_text_is_exact_length_and_unique_per_request():
    for tokens in (1, 3, 128, 32_768, 300_000):  # past the 1 MiB pool: it wraps
        assert len(request_text(7, tokens)) == 4 * tokens
    a, b = request_text(1, 1000), request_text(2, 1000)
    assert common_prefix(a, b) < 10  # "Request 1." vs "Request 2."
    assert request_text(1, 1000) == a and request_text(1, 1000, seed=1) != a


def test_pool_is_fixed_readable_text():
    text = pool()
    assert len(text) == 1 << 20 and text.isascii()
    assert text.startswith(pool()[:100]) and ". " in text[:200]
    assert filler(10, len(text) - 4) == text[-4:] + text[:6]


def test_block_text_is_the_same_for_the_same_id_and_differs_at_once_between_ids():
    first = block_text(5)
    assert len(first) == BLOCK_CHARS == 2048 and first.startswith("[block 5] ")
    block_text.cache_clear()  # rebuilt from scratch, not served from the cache
    assert block_text(5) == first
    assert common_prefix(block_text(5), block_text(6)) < 10


def test_requests_sharing_leading_ids_share_exactly_that_prefix():
    a = blocks_text([0, 1, 2, 3], 2000, index=0)
    b = blocks_text([0, 1, 9], 1400, index=1)
    assert len(a) == 8000 and len(b) == 5600
    shared = common_prefix(a, b)
    assert 2 * BLOCK_CHARS <= shared < 2 * BLOCK_CHARS + 10
    # longer than its ids cover: padded with text of its own, not someone else's blocks
    c = blocks_text([0], 600, index=5)
    d = blocks_text([0], 600, index=6)
    assert len(c) == 2400 and BLOCK_CHARS <= common_prefix(c, d) < BLOCK_CHARS + 8


def test_shared_prefixes_groups_are_seeded_and_order_free():
    prefixes = SharedPrefixes(100, groups=4, seed=2)
    groups = [prefixes.group_of(i) for i in range(400)]
    assert set(groups) == {0, 1, 2, 3}
    assert [prefixes.group_of(i) for i in reversed(range(400))] == groups[::-1]
    texts = {prefixes.text(g) for g in range(4)}
    assert len(texts) == 4 and all(len(t) == 400 for t in texts)
    assert SharedPrefixes(100, 4, seed=3).text(0) != prefixes.text(0)
    with pytest.raises(UserInputError, match="prefix tokens"):
        SharedPrefixes(0, 1)
    with pytest.raises(UserInputError, match="prefix groups"):
        SharedPrefixes(10, 0)


def test_synthetic_source_lengths_prefixes_and_laziness():
    source = SyntheticSource(
        parse_length_spec("uniform:50:5000"),
        parse_length_spec("normal:200:30", "output"),
        seed=1,
        prefixes=SharedPrefixes(256, groups=2, seed=1),
    )
    requests = [source.next_request() for _ in range(200)]
    assert [r.index for r in requests] == list(range(200))
    for r in requests:
        body = r.input_tokens - 256
        assert 50 <= body <= 5000 and r.prefix_tokens == 256
        assert r.messages[0].role == "system" and len(r.messages[0].content) == 1024
        assert len(r.text) == 4 * r.input_tokens
        assert r.messages[0].content == source._prefixes.for_request(r.index)
    assert source.request(150) == requests[150]  # random access gives the same request
    outputs = np.array([r.max_tokens for r in requests])
    assert outputs.mean() == pytest.approx(200, rel=0.05)
    assert len({r.messages[0].content for r in requests}) == 2


def test_synthetic_source_without_prefix_sends_one_user_message():
    source = SyntheticSource(parse_length_spec("32768"), parse_length_spec("1", "output"))
    r = source.request(0)
    assert r.messages[0].role == "user" and len(r.text) == 4 * 32768 and r.max_tokens == 1


def test_trace_source_replays_lengths_offsets_and_shared_blocks():
    trace = read_trace(MOONCAKE)
    source = TraceSource(trace)
    assert source.size == 2000
    a, b = source.request(0), source.request(1)
    assert a.offset_s == 0.0 and a.input_tokens == 6758 and a.max_tokens == 500
    assert len(a.text) == 4 * 6758
    # rows 0 and 1 share block 0 only
    assert BLOCK_CHARS <= common_prefix(a.text, b.text) < BLOCK_CHARS + 10
    last = source.request(1999)
    assert last.offset_s == trace.offsets[1999] and last.max_tokens == trace.output_tokens[1999]
    assert [source.next_request().index for _ in range(2001)][-1] == 0  # wraps at the end


def test_trace_source_without_blocks_builds_unique_prompts():
    source = TraceSource(read_trace(AZURE).window(10.0, 30.0).scaled(2.0))
    r = source.request(0)
    assert len(r.text) == 4 * r.input_tokens and r.offset_s is not None and r.offset_s < 15


def test_dataset_source_uses_row_lengths_else_the_runs(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"prompt": "abcdefgh", "max_tokens": 9}\n{"prompt": "xyz"}\n')
    source = DatasetSource(read_dataset(path), max_tokens=64, seed=0)
    requests = {source.request(i).text: source.request(i) for i in range(2)}
    assert requests["abcdefgh"].max_tokens == 9 and requests["abcdefgh"].input_tokens == 2
    assert requests["xyz"].max_tokens == 64 and requests["xyz"].input_tokens == 1
    assert {source.request(i).text for i in range(2, 40)} == {"abcdefgh", "xyz"}
    assert source.request(30) == DatasetSource(read_dataset(path), 64, seed=0).request(30)


def test_dataset_source_follows_the_datasets_seeded_order(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(f'{{"prompt": "p{i}"}}\n' for i in range(30)))
    data = read_dataset(path)
    source = DatasetSource(data, max_tokens=8, seed=5)
    assert [source.request(i).text for i in range(30)] == [r.prompt for r in data.sample(30, 5)]


def test_every_source_is_a_request_builder(tmp_path):
    from servecap.workload.sources import RequestBuilder

    path = tmp_path / "d.jsonl"
    path.write_text('{"prompt": "a"}\n')
    builders: list[RequestBuilder] = [
        SyntheticSource(parse_length_spec("4"), parse_length_spec("4", "output")),
        DatasetSource(read_dataset(path), 4),
        TraceSource(read_trace(AZURE)),
    ]
    for builder in builders:
        assert builder.next_request().index == 0 and builder.next_request().index == 1
