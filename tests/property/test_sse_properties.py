"""Property tests: the SSE decoder and the chunk reader against arbitrary input."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from servecap.client.chunks import ChunkReader
from servecap.core.errors import ServecapError, SSEProtocolError
from servecap.core.records import RequestRecord
from servecap.sse.decoder import SSEDecoder, SSEEvent

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

line_ends = st.sampled_from([b"\n", b"\r\n", b"\r"])
texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                       blacklist_characters="\r\n"), max_size=40)


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, list[SSEEvent]]:
    """A well-formed stream (CR, LF or CRLF, comments, multi-line data) and its events.

    One line-end style a stream: a lone CR followed by an LF would be one CRLF."""
    out, events = b"", []
    end = draw(line_ends)
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            out += b": keep-alive" + end
        event = draw(st.sampled_from(["", "error", "message"]))
        if event:
            out += b"event: " + event.encode() + end
        lines = draw(st.lists(texts, min_size=1, max_size=3))
        for line in lines:
            out += b"data: " + line.encode() + end
        out += end
        events.append(SSEEvent(event or "message", "\n".join(lines)))
    return out, events


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


def decode(parts: list[bytes], max_line: int = 1 << 20) -> list[SSEEvent]:
    decoder = SSEDecoder(max_line_bytes=max_line)
    events: list[SSEEvent] = []
    for part in parts:
        events.extend(decoder.feed(part))
    return events + decoder.close()


@SETTINGS
@given(streams(), st.lists(st.integers(0, 10_000), max_size=20))
def test_any_split_gives_the_same_events(stream: tuple[bytes, list[SSEEvent]],
                                         cuts: list[int]) -> None:
    data, expected = stream
    assert decode([data]) == expected
    assert decode(split(data, cuts)) == expected


@SETTINGS
@given(st.binary(max_size=400), st.lists(st.integers(0, 10_000), max_size=20))
def test_arbitrary_bytes_any_split_same_events(data: bytes, cuts: list[int]) -> None:
    assert decode(split(data, cuts)) == decode([data])
    assert decode([bytes([b]) for b in data]) == decode([data])


@SETTINGS
@given(st.binary(max_size=2000), st.lists(st.integers(0, 10_000), max_size=30),
       st.integers(1, 64))
def test_buffer_bounded_by_line_cap_and_only_servecap_errors(
        data: bytes, cuts: list[int], cap: int) -> None:
    decoder = SSEDecoder(max_line_bytes=cap)
    try:
        for part in split(data, cuts):
            decoder.feed(part)
            assert decoder.buffered_bytes <= cap
        decoder.close()
    except SSEProtocolError:
        pass


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=20,
)
chunk_like = st.fixed_dictionaries({}, optional={
    "choices": st.lists(st.fixed_dictionaries({}, optional={
        "delta": json_values | st.dictionaries(
            st.sampled_from(["content", "reasoning_content", "reasoning", "tool_calls",
                             "role"]), json_values),
        "text": json_values, "finish_reason": json_values}) | json_values, max_size=2),
    "usage": json_values | st.dictionaries(
        st.sampled_from(["prompt_tokens", "completion_tokens"]), json_values),
    "error": json_values,
})


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(["message", "message", "error"]),
                          chunk_like | json_values), max_size=6),
       st.booleans())
@pytest.mark.slow
@example([("message", {"choices": [{"delta": [1]}]})], True)
@example([("message", {"choices": [{"delta": "text"}]})], True)
@example([("message", {"choices": [{"delta": {"content": 5}}]})], True)
@example([("message", {"choices": [{"text": ["a"]}]})], False)
@example([("message", {"choices": [{"delta": {"reasoning": {"x": 1}}}]})], True)
def test_chunk_reader_never_raises_on_hostile_json(events: list[tuple[str, Any]],
                                                   chat: bool) -> None:
    record = RequestRecord(0, 1, 0, 0, sent_at=0)
    reader = ChunkReader(record, chat)
    for i, (event, value) in enumerate(events):
        reader.feed(event, json.dumps(value), 10 + i)
    reader.finish(20)
    assert record.status in ("ok", "failed")
    assert isinstance(record.completion_tokens, int)
    assert isinstance(record.output_chars, int)


@SETTINGS
@given(st.binary(max_size=300))
def test_chunk_reader_arbitrary_data_text(data: bytes) -> None:
    record = RequestRecord(0, 1, 0, 0, sent_at=0)
    reader = ChunkReader(record, True)
    try:
        reader.feed("message", data.decode("utf-8", errors="replace"), 1)
        reader.finish(1)
    except ServecapError:
        pass


data_payloads = st.lists(st.binary(max_size=30).filter(lambda b: b"\n" not in b
                                                      and b"\r" not in b), max_size=6)


class GeneralOnly(SSEDecoder):
    """The decoder with its fast path turned off."""

    def _whole_events(self, chunk: bytes) -> list[SSEEvent] | None:
        return None


@SETTINGS
@given(data_payloads, st.integers(1, 64), st.lists(st.integers(0, 10_000), max_size=4))
def test_the_whole_events_fast_path_reads_as_the_general_one(
        payloads: list[bytes], cap: int, cuts: list[int]) -> None:
    """Reads of whole one-line `data: ` events (the fast path) give the events, the
    replacement count and the size errors that the general path gives the same reads."""
    chunk = b"".join(b"data: " + p + b"\n\n" for p in payloads)
    outcomes = []
    for kind in (SSEDecoder, GeneralOnly):
        decoder = kind(max_line_bytes=cap)
        try:
            events = [e for part in split(chunk, cuts) for e in decoder.feed(part)]
            outcomes.append((events + decoder.close(), decoder.replaced))
        except SSEProtocolError:
            outcomes.append(None)
    assert outcomes[0] == outcomes[1]
