"""Chunk building: the fast template path equals the dict path, byte for byte."""

from __future__ import annotations

import pytest

from servecap.sim.server.chunks import ChunkMaker
from servecap.sim.server.openai import SimRequest, count_tokens, sse


@pytest.mark.parametrize("chat", [True, False])
@pytest.mark.parametrize("last", [True, False])
def test_token_sse_template_matches_dict(chat: bool, last: bool) -> None:
    req = SimRequest(chat, 'm"odel\\', 10, 20, True, True, False, 0)
    maker = ChunkMaker(req, 7, 1700000000)
    assert maker.token_sse(3, 2, last) == sse(maker.tokens(3, 2, last))


def test_reasoning_and_usage_take_the_dict_path() -> None:
    req = SimRequest(True, "m", 10, 20, True, True, True, 2)
    maker = ChunkMaker(req, 1, 0)
    assert maker.token_sse(0, 1, False) == sse(maker.tokens(0, 1, False))
    assert b"reasoning_content" in maker.token_sse(0, 1, False)


@pytest.mark.parametrize("reasoning", [0, 3])
def test_wire_chunks_are_the_framed_template_and_repeat_from_the_cache(reasoning: int) -> None:
    req = SimRequest(False, "m", 10, 200, True, True, False, reasoning)
    maker = ChunkMaker(req, 5, 0, wire=lambda data: b"<" + data + b">")
    for start in range(40):  # past len(WORDS): later chunks come from the cache
        for n in (1, 3):
            assert maker.wire_chunk(start, n) == b"<" + maker.token_sse(start, n, False) + b">"
    assert maker.wire_chunk(20, 1) is maker.wire_chunk(36, 1)  # same text, built once


def test_prompt_token_rule() -> None:
    assert count_tokens(0) == 1
    assert count_tokens(4) == 1
    assert count_tokens(5) == 2
    assert count_tokens(512) == 128
