"""How the simulator turns a prompt into prefix-cache block hashes (it has no tokenizer).

The rule follows the prompt-token count (``openai.count_tokens``): a token is
``CHARS_PER_TOKEN`` = 4 characters (Unicode code points), so block ``k`` of ``B`` tokens is
characters ``[4Bk, 4B(k + 1))`` of the prompt's text. The text is what the token count
reads: for chat, the text contents of the messages concatenated in order, with no roles or
separators, so a multi-turn history starts with exactly the text of its earlier turn and
shares its blocks; for completions, the prompt string (a list of strings is joined). A
prompt of token ids takes ``B`` ids a block.

Only full blocks are hashed, as vLLM's automatic prefix caching does: a partial tail block
is never cached. The hashes are chained: block ``k``'s hash covers block ``k - 1``'s hash and
its own content, so equal hashes at position ``k`` mean equal prefixes of ``k + 1`` blocks.
The hash is Python's built-in ``hash`` of ``(parent hash, block content)`` (64 bits), as
vLLM's ``builtin`` hash option: it is salted per process (``PYTHONHASHSEED``), which a cache
that lives in one process does not mind, and it costs ~1.5 ms for a 32K-token prompt where
BLAKE2b cost 7 ms on the server's event loop.
"""

from __future__ import annotations

from collections.abc import Sequence

CHARS_PER_TOKEN = 4
# parents of the first block: different roots keep text and token-id prompts apart
_TEXT_ROOT = 0x7E57
_IDS_ROOT = 0x1D5


def text_block_hashes(text: str, block_tokens: int) -> tuple[int, ...]:
    """Chained hashes of the full blocks of ``text`` (``4 * block_tokens`` characters each)."""
    width = CHARS_PER_TOKEN * block_tokens
    out: list[int] = []
    parent = _TEXT_ROOT
    for start in range(0, len(text) - width + 1, width):
        parent = hash((parent, text[start : start + width]))
        out.append(parent)
    return tuple(out)


def id_block_hashes(ids: Sequence[int], block_tokens: int) -> tuple[int, ...]:
    """Chained hashes of the full blocks of a token-id prompt (``block_tokens`` ids each)."""
    out: list[int] = []
    parent = _IDS_ROOT
    for start in range(0, len(ids) - block_tokens + 1, block_tokens):
        parent = hash((parent, tuple(ids[start : start + block_tokens])))
        out.append(parent)
    return tuple(out)


def block_hashes(prompt: str | Sequence[int], block_tokens: int) -> tuple[int, ...]:
    """The prompt's full-block hashes: text by the 4-characters rule, ids ``block_tokens``
    a block."""
    if block_tokens < 1:
        raise ValueError("block_tokens must be >= 1")
    if isinstance(prompt, str):
        return text_block_hashes(prompt, block_tokens)
    return id_block_hashes(prompt, block_tokens)
