"""Lazy request builders: synthetic lengths, datasets and traces, one request at a time.

Contract:
- Every source builds request i only when asked (`request(i)`), from a seed and i alone:
  nothing is built up front (a 12k-row trace of 12k-token prompts would be ~580 MB of
  text), any access order gives the same requests, and memory stays bounded by what the
  caller keeps. `next_request()` walks i = 0, 1, 2, ... for schedulers that just want the
  next one; `size` is the number of distinct requests (None: unbounded).
- A `PlannedRequest` carries its own generation parameters: `text` (the whole prompt, for
  `/v1/completions`), `messages` (the same as chat turns: a shared prefix is a system
  message), `max_tokens`, the `input_tokens` it was built for (the server's usage is the
  truth), `prefix_tokens` of it that are shared by design, and a trace row's `offset_s`.
- `SyntheticSource`: lengths from two `LengthDist`s (`--input-tokens/--output-tokens`),
  drawn from `numpy.random.default_rng([seed, i])`; with `SharedPrefixes` the prompt is the
  group's system prompt plus `input_tokens` of its own (vLLM's `--random-prefix-len`
  convention: the prefix comes on top). With a tokenizer, the body is cut to exact tokens.
- `DatasetSource`: rows in `Dataset.sample` order while they last (the same seeded
  permutation), then drawn with replacement per index; each row's own `max_tokens` if it
  has one, else the run's. For sessions, `conversations()` gives every row's user turns.
- `TraceSource`: row i at its offset, asking for its recorded output length, with a prompt
  of its recorded input length; Mooncake block ids become shared block text (what they
  share is computed by `prefix_cache.implied_hit_rate`, so `prefix_tokens` stays 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from servecap.workload.datasets import Dataset, Message
from servecap.workload.lengths import LengthDist
from servecap.workload.prompts import CHARS_PER_TOKEN
from servecap.workload.text import SharedPrefixes, blocks_text, pool, request_text
from servecap.workload.tokenize import ExactTokens
from servecap.workload.traces import Trace


@dataclass(frozen=True, slots=True)
class PlannedRequest:
    """One request to send, with its own generation parameters."""

    index: int
    messages: tuple[Message, ...]
    max_tokens: int
    input_tokens: int
    prefix_tokens: int = 0
    offset_s: float | None = None

    @property
    def text(self) -> str:
        """The whole prompt as one text (what a completions request sends)."""
        return "".join(m.content for m in self.messages)


class RequestBuilder(Protocol):
    """What every source here offers a scheduler (issue 12's request-source seam)."""

    size: int | None

    def request(self, index: int) -> PlannedRequest: ...

    def next_request(self) -> PlannedRequest: ...


class _Walk:
    """`next_request()` over `request(i)` for i = 0, 1, 2, ..."""

    size: int | None = None

    def __init__(self) -> None:
        self._next = 0

    def request(self, index: int) -> PlannedRequest:
        raise NotImplementedError

    def next_request(self) -> PlannedRequest:
        index = self._next
        self._next += 1
        if self.size is not None:
            index %= self.size
        return self.request(index)


class SyntheticSource(_Walk):
    """Prompts of drawn lengths, optionally behind one of G shared system prompts."""

    def __init__(
        self,
        input_tokens: LengthDist,
        output_tokens: LengthDist,
        *,
        seed: int = 0,
        prefixes: SharedPrefixes | None = None,
        tokenizer: ExactTokens | None = None,
    ) -> None:
        super().__init__()
        pool()  # built once, here: not on the first request's send path
        self._inputs, self._outputs = input_tokens, output_tokens
        self._seed, self._prefixes, self._tok = seed, prefixes, tokenizer

    def lengths(self, index: int) -> tuple[int, int]:
        """(input, output) tokens of request `index`."""
        rng = np.random.default_rng([self._seed, index])
        return int(self._inputs.sample(1, rng)[0]), int(self._outputs.sample(1, rng)[0])

    def request(self, index: int) -> PlannedRequest:
        tokens_in, tokens_out = self.lengths(index)
        body = request_text(index, tokens_in, self._seed)
        if self._tok is not None:
            body = self._tok.fit(body, tokens_in)
        if self._prefixes is None:
            return PlannedRequest(index, (Message("user", body),), tokens_out, tokens_in)
        shared = self._prefixes.for_request(index)
        if self._tok is not None:
            shared = self._tok.fit(shared, self._prefixes.tokens)
        messages = (Message("system", shared), Message("user", body))
        n = self._prefixes.tokens
        return PlannedRequest(index, messages, tokens_out, tokens_in + n, prefix_tokens=n)


class DatasetSource(_Walk):
    """Dataset rows, seeded: distinct while they last, then drawn with replacement."""

    def __init__(self, dataset: Dataset, max_tokens: int, *, seed: int = 0) -> None:
        super().__init__()
        self._dataset, self._max_tokens, self._seed = dataset, max_tokens, seed
        self._order = np.random.default_rng(seed).permutation(len(dataset))

    @property
    def max_tokens(self) -> int:
        """What a request asks for when its row does not say (the run's `--output-tokens`)."""
        return self._max_tokens

    def conversations(self) -> tuple[tuple[str, ...], ...]:
        """Each row's user turns in order, for sessions (a multi-turn ShareGPT row: its
        human turns; a prompt row: its one prompt), rows without a user turn left out.
        The recorded answers are not sent: the server's own answers form the history."""
        turns = (
            tuple(m.content for m in (*row.messages, *row.later) if m.role == "user" and m.content)
            for row in self._dataset.rows
        )
        return tuple(t for t in turns if t)

    def row_index(self, index: int) -> int:
        if index < self._order.size:
            return int(self._order[index])
        rng = np.random.default_rng([self._seed, index])
        return int(rng.integers(0, self._order.size))

    def request(self, index: int) -> PlannedRequest:
        row = self._dataset.rows[self.row_index(index)]
        tokens = -(-row.chars // CHARS_PER_TOKEN)
        return PlannedRequest(index, row.messages, row.max_tokens or self._max_tokens, tokens)


class TraceSource(_Walk):
    """A trace's rows in order: offsets, output lengths, prompts of the recorded length."""

    def __init__(self, trace: Trace, *, seed: int = 0, tokenizer: ExactTokens | None = None):
        super().__init__()
        pool()
        self._trace, self._seed, self._tok = trace, seed, tokenizer
        self.size = len(trace)

    def request(self, index: int) -> PlannedRequest:
        trace = self._trace
        tokens_in = int(trace.input_tokens[index])
        ids = trace.block_ids(index)
        if ids.size:
            text = blocks_text(ids, tokens_in, index)
        else:
            text = request_text(index, tokens_in, self._seed)
        if self._tok is not None:
            text = self._tok.fit(text, tokens_in)
        return PlannedRequest(
            index,
            (Message("user", text),),
            int(trace.output_tokens[index]),
            tokens_in,
            offset_s=float(trace.offsets[index]),
        )
