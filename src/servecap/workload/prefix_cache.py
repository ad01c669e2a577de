"""The prefix-cache hit rate a trace's block ids imply, for checking a server's /metrics.

Contract:
- `implied_hit_rate(block_lists, input_tokens)` replays requests in order through an ideal
  prefix cache of `BLOCK_TOKENS`-token blocks keyed by the chain of ids (block j of a
  request matches only if its ids 0..j all match an earlier request's: a prefix cache
  reuses prefixes, not blocks in the middle). A request's hit is its longest cached
  leading run; every block it holds is then cached. Counts are in tokens, as vLLM's
  `prefix_cache_queries` / `prefix_cache_hits` counters are: queries are the prompt
  tokens, hits the tokens of the cached run (the last block only as far as the prompt
  reaches into it).
- `cache_blocks` bounds the cache (LRU over chained blocks; None = unbounded), for a server
  whose KV budget evicts. `granularity` floors each request's hit to a multiple of the
  server's own block size (vLLM caches only full blocks of e.g. 16 tokens).
- `trace_hit_rate(trace)` does the same over a `Trace`'s rows (the function a replay test
  compares with the server's `/metrics`).
- A request's hit is capped at its prompt length minus one token: an engine computes at
  least the last prompt token itself to produce the first output token (vLLM does).
- `hit_rate_split(rate, input_tokens)` builds the other way round (`--prefix-hit-rate`): a
  prompt of `input_tokens` is a shared prefix (one of a seeded pool, `text.SharedPrefixes`)
  and a fresh suffix, the prefix `rate` of it, so an ideal cache that holds the pool serves
  `rate` of the prompt tokens. Its `ideal` is the share whole tokens allow (a suffix keeps
  at least one token, the one an engine always computes); the first request on each prefix
  of the pool finds nothing in a cold cache.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from servecap.core.errors import UserInputError, bad_setting
from servecap.workload.traces import MOONCAKE_BLOCK_TOKENS, Trace

BLOCK_TOKENS = 512


@dataclass(frozen=True, slots=True)
class HitRate:
    """Prompt tokens looked up and found in the cache, over a whole trace."""

    query_tokens: int
    hit_tokens: int
    requests: int

    @property
    def rate(self) -> float:
        return self.hit_tokens / self.query_tokens if self.query_tokens else 0.0


@dataclass(frozen=True, slots=True)
class HitRateSplit:
    """A prompt built for a prefix-cache hit rate: shared prefix tokens + fresh suffix."""

    target: float
    prefix_tokens: int
    suffix_tokens: int

    @property
    def ideal(self) -> float:
        """The share of prompt tokens an ideal cache holding the prefix serves."""
        return self.prefix_tokens / (self.prefix_tokens + self.suffix_tokens)


def hit_rate_split(rate: float, input_tokens: int) -> HitRateSplit:
    """The prefix and suffix of an `input_tokens` prompt an ideal cache serves `rate` of."""
    if not 0.0 <= rate <= 1.0:
        raise bad_setting("prefix_hit_rate", f"{rate!r}: expected a fraction in 0..1")
    if input_tokens < 2:
        raise bad_setting("prefix_hit_rate", "needs prompts of at least 2 tokens")
    prefix = min(round(rate * input_tokens), input_tokens - 1)
    return HitRateSplit(rate, prefix, input_tokens - prefix)


class _ChainCache:
    """Chained block keys with optional LRU eviction."""

    def __init__(self, capacity: int | None) -> None:
        self._keys: OrderedDict[tuple[int, int], None] = OrderedDict()
        self._capacity = capacity
        self._ids: dict[tuple[int, int], int] = {}

    def chain(self, ids: Sequence[int] | np.ndarray) -> list[tuple[int, int]]:
        """The chained key of every block: (key of the block before, this id) interned."""
        keys, parent = [], -1
        for block in ids:
            pair = (parent, int(block))
            parent = self._ids.setdefault(pair, len(self._ids))
            keys.append(pair)
        return keys

    def cached_run(self, keys: list[tuple[int, int]]) -> int:
        run = 0
        for key in keys:
            if key not in self._keys:
                break
            run += 1
        return run

    def insert(self, keys: list[tuple[int, int]]) -> None:
        for key in keys:
            self._keys[key] = None
            self._keys.move_to_end(key)
        if self._capacity is not None:
            while len(self._keys) > self._capacity:
                self._keys.popitem(last=False)


def implied_hit_rate(
    block_lists: Iterable[Sequence[int] | np.ndarray],
    input_tokens: Iterable[int],
    *,
    block_tokens: int = BLOCK_TOKENS,
    cache_blocks: int | None = None,
    granularity: int = 1,
) -> HitRate:
    """Token hit rate of an ideal prefix cache serving these requests in order."""
    cache = _ChainCache(cache_blocks)
    queries = hits = requests = 0
    for ids, tokens in zip(block_lists, input_tokens, strict=True):
        keys = cache.chain(ids)
        run = cache.cached_run(keys)
        hit = min(run * block_tokens, int(tokens) - 1)
        hits += max(0, hit - hit % granularity)
        queries += int(tokens)
        requests += 1
        cache.insert(keys)
    return HitRate(queries, hits, requests)


def trace_hit_rate(
    trace: Trace, *, cache_blocks: int | None = None, granularity: int = 1
) -> HitRate:
    """`implied_hit_rate` over every row of a trace with block ids (Mooncake)."""
    if not trace.has_blocks:
        raise UserInputError(f"{trace.path}: a {trace.format} trace has no prefix block ids")
    return implied_hit_rate(
        (trace.block_ids(i) for i in range(len(trace))),
        trace.input_tokens.tolist(),
        block_tokens=MOONCAKE_BLOCK_TOKENS,
        cache_blocks=cache_blocks,
        granularity=granularity,
    )
