"""Prompt text of a given length, shared system prompts, and Mooncake block text.

Contract:
- Lengths follow `prompts.CHARS_PER_TOKEN` (4 characters a token, the simulator's counting
  rule): a text for N tokens is exactly 4N characters, so the simulator counts N tokens and
  a BPE tokenizer about N. For exact counts under a real tokenizer see `workload.tokenize`.
- All text comes from one seeded, fixed pool of readable words (`pool()`, 1 MiB, built once
  on first use); a text is a slice of it, so building a 32K-token prompt is one string
  slice, and a long one wraps around the pool. Nothing is built before it is asked for.
- `request_text(index, tokens, seed)`: a prompt that starts with its own head (request
  number and one of the built-in tasks), so no two requests share a prefix by accident.
- `SharedPrefixes(tokens, groups, seed)`: G distinct system prompts of N tokens; request i
  uses group `group_of(i)`, a seeded, order-free choice (the same for any access order).
- `block_text(k)`: Mooncake block id k is always the same 512-token text (2,048
  characters, opening with its id so distinct ids differ at once); `blocks_text(ids, tokens)`
  is those blocks in order cut to `tokens`, so requests sharing leading ids share exactly
  that prefix text. A prompt longer than its blocks is padded with text unique to it.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence

import numpy as np

from servecap.core.errors import bad_setting
from servecap.workload.prompts import _WORDS, CHARS_PER_TOKEN, SUBJECTS, TASKS

POOL_CHARS = 1 << 20
POOL_SEED = 20_250_115
BLOCK_TOKENS = 512
BLOCK_CHARS = BLOCK_TOKENS * CHARS_PER_TOKEN
# Cached block texts: ~2 KiB each, so at most ~16 MiB however long the trace.
_BLOCK_CACHE = 8192


@functools.cache
def pool() -> str:
    """The fixed word pool every text is cut from (same bytes on every machine)."""
    rng = np.random.default_rng(POOL_SEED)
    words = np.array(_WORDS)
    mean_word = sum(len(w) for w in _WORDS) / len(_WORDS) + 1
    count = int(POOL_CHARS / mean_word * 1.1)
    picks = words[rng.integers(0, len(_WORDS), count)]
    # A full stop every 10 words keeps it readable prose rather than one endless sentence.
    picks[9::10] = np.char.add(picks[9::10], ".")
    return " ".join(picks.tolist())[:POOL_CHARS]


def filler(chars: int, start: int) -> str:
    """`chars` characters of pool text from position `start` (wrapping round the pool)."""
    if chars <= 0:
        return ""
    text = pool()
    start %= len(text)
    if start + chars <= len(text):
        return text[start : start + chars]
    parts = [text[start:]]
    remaining = chars - len(parts[0])
    while remaining > 0:
        parts.append(text[:remaining])
        remaining -= len(parts[-1])
    return "".join(parts)


def _offset(*key: object) -> int:
    """A stable pool offset for `key` (hashlib, not hash(): the same in every process)."""
    digest = hashlib.blake2b(repr(key).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") % POOL_CHARS


def fit(head: str, chars: int, key: tuple[object, ...]) -> str:
    """`head` then pool text chosen by `key`, exactly `chars` characters long."""
    if len(head) >= chars:
        return head[:chars]
    return head + filler(chars - len(head), _offset(*key))


def request_text(index: int, tokens: int, seed: int = 0) -> str:
    """The body of request `index`: exactly `tokens * CHARS_PER_TOKEN` characters."""
    task = TASKS[index % len(TASKS)]
    subject = SUBJECTS[(index // len(TASKS)) % len(SUBJECTS)]
    head = f"Request {index}. {task.format(s=subject)} Context: "
    return fit(head, tokens * CHARS_PER_TOKEN, ("request", seed, index))


class SharedPrefixes:
    """`groups` seeded system prompts of `tokens` tokens each (`--prefix-tokens/groups`)."""

    __slots__ = ("groups", "seed", "tokens")

    def __init__(self, tokens: int, groups: int = 1, seed: int = 0) -> None:
        if tokens < 1:
            raise bad_setting("prefix_tokens", f"{tokens}: expected a number of tokens >= 1")
        if groups < 1:
            raise bad_setting("prefix_groups", f"{groups}: expected a number >= 1")
        self.tokens, self.groups, self.seed = tokens, groups, seed

    def group_of(self, index: int) -> int:
        """The group request `index` uses: seeded, independent of the order of calls."""
        return _offset("group", self.seed, index) % self.groups

    @functools.lru_cache(maxsize=64)  # noqa: B019 - a few prefixes per instance, on purpose
    def text(self, group: int) -> str:
        """System prompt `group`: exactly `tokens * CHARS_PER_TOKEN` characters."""
        head = f"System prompt {group} of {self.groups}. You are a careful assistant. "
        return fit(head, self.tokens * CHARS_PER_TOKEN, ("prefix", self.seed, group))

    def for_request(self, index: int) -> str:
        return self.text(self.group_of(index))


@functools.lru_cache(maxsize=_BLOCK_CACHE)
def block_text(block_id: int) -> str:
    """Mooncake block `block_id` as text: always the same 2,048 characters."""
    return fit(f"[block {block_id}] ", BLOCK_CHARS, ("block", block_id))


def blocks_text(block_ids: Sequence[int] | np.ndarray, tokens: int, index: int = 0) -> str:
    """The prompt of a request whose blocks are `block_ids`, cut to `tokens` tokens.

    Past its last block (a trace row whose length is longer than its ids cover) the prompt
    continues with text unique to `index`, so it shares no more than its ids say.
    """
    chars = tokens * CHARS_PER_TOKEN
    needed = min(len(block_ids), -(-chars // BLOCK_CHARS))
    text = "".join(block_text(int(k)) for k in block_ids[:needed])
    if len(text) >= chars:
        return text[:chars]
    return text + fit(f"[tail {index}] ", chars - len(text), ("tail", index))
