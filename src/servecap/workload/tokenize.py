"""Prompts of exactly N tokens for one tokenizer (`--tokenizer PATH`), optional.

Contract:
- `load_tokenizer(path)` opens a Hugging Face `tokenizer.json` with the `tokenizers` package
  (the optional extra `servecap[tokenizers]`; imported only here, only when asked for). A
  missing package or an unreadable file is a `UserInputError` saying what to do.
- `ExactTokens.fit(text, tokens)` returns a prefix of `text` (extended with pool text when
  `text` is too short) that encodes to exactly `tokens` tokens, special tokens excluded,
  when the tokenizer allows it; cutting can merge or split tokens at the cut, so it
  searches a few cut points near the first guess and returns the nearest count it found
  (`count()` says what that is). Without a tokenizer the 4-characters-a-token rule of
  `workload.text` stays; the server's usage is the truth either way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servecap.core.errors import bad_setting
from servecap.workload.text import filler

# Tries around the first cut; each is one encode of the prompt, so bounded work.
_MAX_TRIES = 8


class ExactTokens:
    """Cuts texts to exact token counts with one `tokenizers.Tokenizer`."""

    __slots__ = ("_tok",)

    def __init__(self, tokenizer: Any) -> None:
        self._tok = tokenizer

    def count(self, text: str) -> int:
        """Tokens `text` encodes to, without special tokens."""
        return len(self._tok.encode(text, add_special_tokens=False).ids)

    def fit(self, text: str, tokens: int) -> str:
        """A prefix of `text` (padded if short) that encodes to `tokens` tokens."""
        if tokens < 1:
            raise ValueError("tokens must be >= 1")
        text = self._long_enough(text, tokens)
        encoding = self._tok.encode(text, add_special_tokens=False)
        ends = [end for _, end in encoding.offsets]
        best, best_gap = text[: ends[tokens - 1]], None
        position = tokens - 1
        for _ in range(_MAX_TRIES):
            candidate = text[: ends[position]]
            got = self.count(candidate)
            gap = got - tokens
            if gap == 0:
                return candidate
            if best_gap is None or abs(gap) < abs(best_gap):
                best, best_gap = candidate, gap
            position = min(len(ends) - 1, max(0, position - gap))
        return best

    def _long_enough(self, text: str, tokens: int) -> str:
        """`text` extended with pool text until it holds more than `tokens` tokens."""
        chars = max(len(text), 8)
        while self.count(text) <= tokens:
            text += " " + filler(chars, len(text))
            chars *= 2
        return text


def load_tokenizer(path: str | Path) -> ExactTokens:
    """The tokenizer in a local `tokenizer.json`, ready to cut prompts."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise bad_setting("tokenizer", "needs the tokenizers package: "
                          "pip install 'servecap[tokenizers]'") from None
    file = Path(path)
    if file.is_dir():
        file = file / "tokenizer.json"
    try:
        return ExactTokens(Tokenizer.from_file(str(file)))
    except Exception as exc:  # tokenizers raises its own untyped errors
        raise bad_setting("tokenizer", f"{file}: cannot load a tokenizer: {exc}") from None
