"""The prompt -> block-hash rule (pure): 4 characters a token, full blocks only, chained."""

from __future__ import annotations

import pytest

from servecap.sim.model.blocks import block_hashes
from servecap.sim.server.openai import parse_request

B = 16  # tokens a block: 64 characters


def test_only_full_blocks_are_hashed() -> None:
    assert block_hashes("a" * 63, B) == ()
    assert len(block_hashes("a" * 64, B)) == 1
    assert len(block_hashes("a" * 191, B)) == 2
    assert len(block_hashes("é" * 128, B)) == 2  # characters, not bytes
    assert len(block_hashes(list(range(47)), B)) == 2  # token ids: 16 a block


def test_equal_prefixes_give_equal_leading_hashes() -> None:
    shared = "s" * 128
    one = block_hashes(shared + "x" * 64, B)
    two = block_hashes(shared + "y" * 64 + "z" * 64, B)
    assert one[:2] == two[:2] and one[2] != two[2]
    assert block_hashes(shared, B) == one[:2]  # deterministic within the process


def test_hashes_are_chained_on_the_parent() -> None:
    # block 1 holds the same 64 characters in both, but block 0 differs: a chained hash
    # must tell them apart (vLLM's hash covers the parent block's hash)
    a = block_hashes("a" * 64 + "c" * 64, B)
    b = block_hashes("b" * 64 + "c" * 64, B)
    assert a[1] != b[1]
    # the same block content at two positions of one prompt hashes differently too
    same = block_hashes("c" * 128, B)
    assert same[0] != same[1]


def test_block_size_sets_the_width() -> None:
    text = "t" * 256
    assert len(block_hashes(text, 1)) == 64
    assert len(block_hashes(text, 64)) == 1
    with pytest.raises(ValueError, match="block_tokens"):
        block_hashes(text, 0)


def test_text_and_token_ids_never_match() -> None:
    assert block_hashes("1" * 64, B)[0] != block_hashes([1] * 16, B)[0]


def _prompt(body: dict[str, object], chat: bool = True) -> str | tuple[int, ...]:
    return parse_request(body, chat, ["m"], 16, 0).prompt


def test_chat_messages_concatenate_so_a_history_shares_its_earlier_turn() -> None:
    system = {"role": "system", "content": "You are terse. " * 10}
    turn1 = [system, {"role": "user", "content": "First question? " * 8}]
    turn2 = [
        *turn1,
        {"role": "assistant", "content": [{"type": "text", "text": "An answer. " * 9}]},
        {"role": "user", "content": "And then? " * 7},
    ]
    first, second = _prompt({"messages": turn1}), _prompt({"messages": turn2})
    assert isinstance(first, str) and isinstance(second, str)
    assert second.startswith(first)
    h1, h2 = block_hashes(first, B), block_hashes(second, B)
    assert len(h1) == len(first) // 64 and h2[: len(h1)] == h1


def test_parsed_prompt_matches_the_token_count() -> None:
    req = parse_request({"prompt": ["ab", "cd" * 40]}, False, ["m"], 16, 0)
    assert req.prompt == "ab" + "cd" * 40 and req.prompt_tokens == 21  # ceil(82 / 4)
    ids = parse_request({"prompt": [5, 6, 7]}, False, ["m"], 16, 0)
    assert ids.prompt == (5, 6, 7) and ids.prompt_tokens == 3
