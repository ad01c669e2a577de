import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servecap.core.errors import SSEProtocolError
from servecap.sse.decoder import SSEDecoder, SSEEvent

STREAM = (
    b": keep-alive comment\r\n"
    b"data: {\"a\": \"h\xc3\xa9llo \xf0\x9f\x98\x80\"}\r\n\r\n"
    b"event: error\n"
    b"data: line one\n"
    b"data: line two\n\n"
    b"data:no-space\r\r"
    b"data: [DONE]\n\n"
)
EXPECTED = [
    SSEEvent("message", '{"a": "héllo 😀"}'),
    SSEEvent("error", "line one\nline two"),
    SSEEvent("message", "no-space"),
    SSEEvent("message", "[DONE]"),
]


def decode_in_pieces(data: bytes, cuts: list[int]) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    start = 0
    for cut in sorted(set(cuts)):
        events += decoder.feed(data[start:cut])
        start = cut
    events += decoder.feed(data[start:])
    events += decoder.close()
    return events


def test_whole_stream_decodes_crlf_comments_multiline_and_utf8():
    assert decode_in_pieces(STREAM, []) == EXPECTED


def test_byte_by_byte_gives_same_events():
    assert decode_in_pieces(STREAM, list(range(len(STREAM)))) == EXPECTED


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=20))
def test_any_split_gives_same_events(cuts):
    assert decode_in_pieces(STREAM, cuts) == EXPECTED


@settings(max_examples=200)
@given(st.binary(max_size=2000), st.lists(st.integers(min_value=0, max_value=2000), max_size=8))
def test_arbitrary_bytes_split_anywhere_agree(data, cuts):
    cuts = [c for c in cuts if c <= len(data)]
    assert decode_in_pieces(data, cuts) == decode_in_pieces(data, [])


def test_unterminated_last_event_is_dispatched_on_close():
    decoder = SSEDecoder()
    assert decoder.feed(b"data: tail") == []
    assert decoder.close() == [SSEEvent("message", "tail")]


def test_line_cap_bounds_the_buffer():
    decoder = SSEDecoder(max_line_bytes=64)
    with pytest.raises(SSEProtocolError):
        decoder.feed(b"data: " + b"x" * 100)


def test_event_cap_bounds_many_short_data_lines():
    decoder = SSEDecoder(max_line_bytes=64)
    with pytest.raises(SSEProtocolError):
        decoder.feed(b"data: 0123456789\n" * 10)


def _decode_line_in_reads(length: int, read: int) -> float:
    """CPU seconds to decode one `length`-byte data line arriving in `read`-byte reads."""
    import time

    line = b"data: " + b"x" * length + b"\n\n"
    reads = [line[i:i + read] for i in range(0, len(line), read)]
    best = float("inf")
    for _ in range(3):
        decoder = SSEDecoder(max_line_bytes=2 * length)
        start = time.process_time()
        for piece in reads:
            events = decoder.feed(piece)
        best = min(best, time.process_time() - start)
        assert events == [SSEEvent("message", "x" * length)]
    return best


def test_a_long_line_costs_its_length_not_its_square():
    # One line, one process, cut into 8x as many reads: a linear decoder does the same
    # work either way; the old one re-copied the whole partial line on every read, so its
    # cost grew with the number of reads (8x here). The large copies common to both (the
    # final join and decode) are in both figures, so machine noise cancels.
    few = _decode_line_in_reads(4 * 1024 * 1024, 64 * 1024)
    many = _decode_line_in_reads(4 * 1024 * 1024, 8 * 1024)
    assert many < 3 * max(few, 1e-3), (few, many)


def test_default_line_cap_is_one_mib():
    ok = SSEDecoder()
    assert ok.feed(b"data: " + b"x" * (512 * 1024) + b"\n\n")[0].data == "x" * (512 * 1024)
    for size in (1024 * 1024 + 1, 2 * 1024 * 1024, 3 * 1024 * 1024):
        decoder = SSEDecoder()
        with pytest.raises(SSEProtocolError):
            for start in range(0, size, 65536):
                decoder.feed(b"x" * min(65536, size - start))


def test_invalid_utf8_replacements_are_counted():
    decoder = SSEDecoder()
    events = decoder.feed(b"data: a\xff\xfeb \xef\xbf\xbd\n\n")  # the last is a real U+FFFD
    assert events[0].data == "a\ufffd\ufffdb \ufffd"
    assert decoder.replaced == 2
