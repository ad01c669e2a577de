"""Prompt datasets (`--dataset FILE`): JSONL of prompts, OpenAI chats or ShareGPT.

Contract:
- `read_dataset(path, fmt)` reads one of `FORMATS`, or `auto` (chosen from the first row's
  keys; `Dataset.format` names what it read). One JSON object a line (blank lines skipped);
  a file whose first character is `[` is read as one JSON array of the same objects
  (ShareGPT's own release is an array), its items numbered instead of lines.
  - `prompt`: `{"prompt": "..."}`, sent as one user message.
  - `openai`: `{"messages": [{"role": ..., "content": ...}, ...]}`, sent as is; `content` is
    text or a list of `{"type": "text", "text": ...}` parts.
  - `sharegpt`: `{"conversations": [{"from": ..., "value": ...}, ...]}`: any leading system
    turn and the first human turn are sent; the turns after it stay in `DatasetRow.later`
    for multi-turn sessions. A conversation with no human turn is skipped and counted in
    `Dataset.skipped` (ShareGPT's dumps hold such rows); everything else malformed is an
    error.
  Any row may carry `max_tokens` or `output_tokens` (an integer >= 1): that row's output
  length, overriding the run's.
- Bad input raises `DataFormatError` (a `UserInputError`) naming the file, the line and the
  column (the JSON column of a syntax error, else the key at fault).
- `Dataset.sample(n, seed)`: `n` rows, seeded. Up to the dataset's size they are distinct
  (a seeded permutation); a level that needs more draws the rest with replacement.
"""

from __future__ import annotations

import json
import mmap
from collections.abc import Generator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import orjson

from servecap.core import json_input
from servecap.core.errors import DataFormatError, bad_setting
from servecap.workload.files import BOM, decode, first_byte, gc_paused, json_lines, mapped_bytes

FORMATS: tuple[str, ...] = ("prompt", "openai", "sharegpt")
_KEY_OF = {"prompt": "prompt", "openai": "messages", "sharegpt": "conversations"}
_SHAREGPT_ROLES = {
    "human": "user", "user": "user", "gpt": "assistant", "chatgpt": "assistant",
    "assistant": "assistant", "bard": "assistant", "bing": "assistant", "model": "assistant",
    "system": "system",
}  # fmt: skip
_CHAT_ROLES = ("system", "developer", "user", "assistant", "tool")


_new_message = _new_row = tuple.__new__


class Message(NamedTuple):
    """One chat turn (a tuple: cheaper to build than a frozen dataclass, 400k per load)."""

    role: str
    content: str


class DatasetRow(NamedTuple):
    """What one request sends: its messages, its own output length, and later turns (a
    tuple, as `Message`: a frozen dataclass's __init__ cost ~10% of a 100k-row load)."""

    messages: tuple[Message, ...]
    max_tokens: int | None = None
    later: tuple[Message, ...] = ()

    @property
    def prompt(self) -> str:
        """The text of the last message (the user's turn)."""
        return self.messages[-1].content

    @property
    def chars(self) -> int:
        return sum(len(m.content) for m in self.messages)


@dataclass(frozen=True, slots=True, eq=False)
class Dataset:
    """The rows of one dataset file."""

    path: str
    format: str
    rows: tuple[DatasetRow, ...]
    skipped: int = 0

    def __len__(self) -> int:
        return len(self.rows)

    def sample_indices(self, n: int, seed: int) -> np.ndarray:
        """`n` row indices: distinct while they last, then drawn with replacement."""
        rng = np.random.default_rng(seed)
        size = len(self.rows)
        first = rng.permutation(size)[: min(n, size)]
        if n <= size:
            return first
        return np.concatenate([first, rng.integers(0, size, n - size)])

    def sample(self, n: int, seed: int) -> list[DatasetRow]:
        return [self.rows[i] for i in self.sample_indices(n, seed)]


def read_dataset(path: str | Path, fmt: str = "auto") -> Dataset:
    """Read a dataset file in `fmt` (one of `FORMATS`, or `auto`)."""
    name = str(path)
    if fmt != "auto" and fmt not in FORMATS:
        raise bad_setting("dataset_format",
                          f"{fmt!r}: expected auto or one of {', '.join(FORMATS)}")
    rows: list[DatasetRow] = []
    skipped = 0
    # closing(): a row's error must release the map's views before the map closes
    with gc_paused(), mapped_bytes(name, "dataset") as data, closing(_items(name, data)) as items:
        for where, item in items:
            if fmt == "auto":
                fmt = _detect(where, item)
            row = _parse(where, item, fmt)
            if row is None:
                skipped += 1
            else:
                rows.append(row)
    if not rows:
        raise DataFormatError(f"{name}: the dataset has no usable rows")
    return Dataset(name, fmt, tuple(rows), skipped)


def _items(
    name: str, mapped: bytes | mmap.mmap
) -> Generator[tuple[str, dict[str, object]], None, None]:
    """(location, object) of every row: `file:line` for JSONL, `file: item i` for an array."""
    if first_byte(mapped) == b"[":
        data = mapped[:]  # an array is parsed whole: a copy, so no view outlives the map
        try:
            items = orjson.loads(data[len(BOM):] if data.startswith(BOM) else data)
        except orjson.JSONDecodeError:
            items = _array_slowly(name, data)
        for index, item in enumerate(items, start=1):
            yield _object(f"{name}: item {index}", item)
        return
    lines = json_lines(name, mapped)
    with closing(lines):
        for number, item in lines:
            yield _object(f"{name}:{number}", item)


def _array_slowly(name: str, data: bytes) -> list[object]:
    """A JSON array orjson refused: `json` names the line and column of the fault."""
    try:
        items = json_input.loads(decode(name, data))
    except json.JSONDecodeError as exc:
        raise DataFormatError(
            f"{name}:{exc.lineno}: column {exc.colno}: not JSON ({exc.msg})"
        ) from None
    if not isinstance(items, list):
        raise DataFormatError(f"{name}: expected a JSON array of rows")
    return items


def _object(where: str, item: object) -> tuple[str, dict[str, object]]:
    if not isinstance(item, dict):
        raise DataFormatError(f"{where}: expected a JSON object, got {type(item).__name__}")
    return where, item


def _detect(where: str, item: dict[str, object]) -> str:
    for fmt, key in _KEY_OF.items():
        if key in item:
            return fmt
    keys = ", ".join(sorted(item)[:8]) or "none"
    raise DataFormatError(
        f"{where}: unknown dataset format: the row has keys {keys}; expected one of "
        f"'prompt', 'messages' or 'conversations' (or name the dataset's format)"
    )


def _parse(where: str, item: dict[str, object], fmt: str) -> DatasetRow | None:
    key = _KEY_OF[fmt]
    if key not in item:
        raise DataFormatError(f"{where}: column {key!r} is missing ({fmt} format)")
    tokens = _max_tokens(where, item)
    if fmt == "prompt":
        text = item["prompt"]
        if not isinstance(text, str) or not text:
            raise DataFormatError(f"{where}: column 'prompt': expected non-empty text")
        return DatasetRow((Message("user", text),), tokens)
    if fmt == "openai":
        return DatasetRow(_chat(where, item["messages"]), tokens)
    return _sharegpt(where, item["conversations"], tokens)


def _max_tokens(where: str, item: dict[str, object]) -> int | None:
    for key in ("max_tokens", "output_tokens"):
        value = item.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise DataFormatError(f"{where}: column {key!r}: expected an integer >= 1")
        return value
    return None


def _chat(where: str, messages: object) -> tuple[Message, ...]:
    column = f"{where}: column 'messages'"
    if not isinstance(messages, list) or not messages:
        raise DataFormatError(f"{column}: expected a non-empty list of messages")
    out = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in _CHAT_ROLES:
            raise DataFormatError(
                f"{column}[{i}]: expected {{'role': one of {', '.join(_CHAT_ROLES)}, "
                f"'content': ...}}"
            )
        out.append(Message(str(message["role"]), _content(f"{column}[{i}]", message)))
    return tuple(out)


def _content(where: str, message: dict[str, object]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        for p in content
    ):
        return "".join(str(p["text"]) for p in content)
    raise DataFormatError(f"{where}: 'content' must be text or a list of text parts")


def _sharegpt(where: str, turns: object, tokens: int | None) -> DatasetRow | None:
    if not isinstance(turns, list):
        raise DataFormatError(f"{where}: column 'conversations': expected a list of turns")
    # The fast path of a hot loop (100k rows of several turns): one comprehension, and
    # tuple.__new__ skips the NamedTuple's Python-level __new__. Any doubt goes to _bad_turn,
    # which finds the turn at fault and says what is wrong with it.
    try:
        messages = [
            _new_message(Message, (_SHAREGPT_ROLES[turn["from"].lower()], turn["value"]))
            for turn in turns
        ]
    except (KeyError, TypeError, AttributeError):
        raise _bad_turn(where, turns) from None
    for message in messages:
        if type(message[1]) is not str:
            raise _bad_turn(where, turns)
    opening = messages[0] if messages else None
    if opening is not None and opening[0] == "user" and opening[1]:  # the usual row
        return _new_row(DatasetRow, ((opening,), tokens, tuple(messages[1:])))
    first = next((i for i, m in enumerate(messages) if m.role == "user" and m.content), None)
    if first is None:
        return None
    system = tuple(m for m in messages[:first] if m.role == "system")
    return DatasetRow((*system, messages[first]), tokens, tuple(messages[first + 1 :]))


def _bad_turn(where: str, turns: list[object]) -> DataFormatError:
    """The error for the first malformed turn of a ShareGPT conversation."""
    column = f"{where}: column 'conversations'"
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict) or not isinstance(turn.get("value"), str):
            return DataFormatError(f"{column}[{i}]: expected {{'from': ..., 'value': text}}")
        speaker = turn.get("from")
        if not isinstance(speaker, str) or speaker.lower() not in _SHAREGPT_ROLES:
            return DataFormatError(
                f"{column}[{i}]: 'from' {speaker!r} is not one of "
                f"{', '.join(sorted(_SHAREGPT_ROLES))}"
            )
    return DataFormatError(f"{column}: malformed turns")
