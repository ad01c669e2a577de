"""The KV budget with a prefix cache: per-request reservations plus cached prompt blocks.

Pure bookkeeping in tokens, no time. The step model (``model.StepEngine``) reserves
``prompt + max_tokens`` tokens for each admitted request. With prefix caching on, a request's
full prompt blocks (hashes from ``blocks``) live in a ``BlockCache`` instead:

- at admission it looks up its leading blocks; those found are *hits*: it holds them (one
  more reference each) and prefills only the rest. At most ``prompt - 1`` tokens can hit,
  as in vLLM, which always computes the last prompt token to get its logits;
- as its prefill is scheduled, each newly covered full block is registered (or, when another
  request registered the same hash meanwhile, shared), so a later request can hit it;
- when it finishes or is cancelled its blocks lose a reference; a block no request holds
  stays cached but evictable, least recently used first (a request's blocks are released
  tail first, so its leading, most shared blocks are evicted last, as vLLM frees them).

Tokens in use = what requests reserve outside the cache + ``block_tokens`` x the blocks some
request holds; a block shared by many requests counts once. Evictable blocks fill what is
left of the budget and are evicted when admissions need the room, so they never keep a
request out. With caching off (or no hashes) every request's reservation is private and the
arithmetic is the plain reservation model's.

``queries`` and ``hits`` (vLLM's ``prefix_cache_queries`` and ``prefix_cache_hits``, in
prompt tokens) are counted once per admitted request; a real engine may count the lookup of
a request that has to wait again at each try.

One simplification: when two running requests compute the same block at once, the second
shares the first's copy as soon as it registers it (vLLM keeps both until one is freed).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from servecap.sim.model.params import ModelParams


class BlockCache:
    """Cached blocks by hash: a reference count for each held block, and the blocks no
    request holds in least-recently-used order (the evictable ones)."""

    def __init__(self) -> None:
        self._refs: dict[int, int] = {}  # held blocks: hash -> requests holding it (>= 1)
        self._idle: OrderedDict[int, None] = OrderedDict()  # evictable, LRU first

    def __contains__(self, block: int) -> bool:
        return block in self._refs or block in self._idle

    def __len__(self) -> int:
        return len(self._refs) + len(self._idle)

    @property
    def held(self) -> int:
        """Blocks at least one running request holds (cannot be evicted)."""
        return len(self._refs)

    @property
    def idle(self) -> int:
        """Cached blocks no request holds (evictable)."""
        return len(self._idle)

    def refs(self, block: int) -> int:
        """How many requests hold ``block`` (0 when idle or absent)."""
        return self._refs.get(block, 0)

    def match(self, blocks: Sequence[int], limit: int) -> int:
        """How many of the leading ``blocks`` (at most ``limit``) are cached."""
        n = 0
        for block in blocks[:limit]:
            if block not in self._refs and block not in self._idle:
                break
            n += 1
        return n

    def acquire(self, block: int) -> None:
        """One more request holds ``block`` (a cached one, or a new one it computed)."""
        if block in self._idle:
            del self._idle[block]
            self._refs[block] = 1
        else:
            self._refs[block] = self._refs.get(block, 0) + 1

    def release(self, block: int) -> None:
        """One request fewer holds ``block``; with none left it becomes the most recently
        used evictable block."""
        left = self._refs[block] - 1
        if left:
            self._refs[block] = left
        else:
            del self._refs[block]
            self._idle[block] = None

    def evict(self, n: int) -> int:
        """Drop up to ``n`` evictable blocks, least recently used first; returns how many."""
        done = 0
        while done < n and self._idle:
            self._idle.popitem(last=False)
            done += 1
        return done


class Request(Protocol):
    """What the KV space reads of a request (the step model's sequence)."""

    rid: int
    prompt: int  # prompt tokens
    blocks: tuple[int, ...]  # its prompt's full-block hashes (``blocks.block_hashes``)

    @property
    def reserve(self) -> int: ...  # tokens it reserves: prompt + max_tokens


@dataclass(slots=True)
class _Hold:
    blocks: tuple[int, ...]  # the request's full prompt blocks
    held: int  # how many of the leading ones it holds in the cache
    private: int  # tokens it reserves outside the cache


class KVSpace:
    """The KV-cache token budget shared by running requests and the prefix cache."""

    def __init__(self, budget_tokens: int, block_tokens: int, caching: bool) -> None:
        self.budget = budget_tokens
        self.block = block_tokens
        self.caching = caching
        self.cache = BlockCache()
        self.evictions = 0  # blocks evicted to make room
        self.queries = 0  # prompt tokens looked up (vLLM's prefix_cache_queries)
        self.hits = 0  # of which cached (vLLM's prefix_cache_hits)
        self._holds: dict[int, _Hold] = {}
        self._private = 0

    @classmethod
    def for_params(cls, params: ModelParams) -> KVSpace:
        """The KV space a profile's parameters describe."""
        return cls(params.kv_budget_tokens, params.prefix_block_tokens, params.prefix_caching)

    @property
    def used(self) -> int:
        """Tokens in use by running requests (held cached blocks counted once)."""
        return self._private + self.block * self.cache.held

    @property
    def usage(self) -> float:
        """``used`` as a fraction of the budget, at most 1 (vLLM's ``kv_cache_usage_perc``)."""
        return min(1.0, self.used / self.budget)

    def _limit(self, prompt: int) -> int:
        """Most leading blocks that may hit: the last prompt token is always computed."""
        return (prompt - 1) // self.block

    def fits(self, req: Request) -> bool:
        """Would ``req`` fit now? Cached blocks other running requests hold cost it
        nothing; evictable blocks do not count against it."""
        shared = 0
        if self.caching and req.blocks:
            hit = self.cache.match(req.blocks, self._limit(req.prompt))
            shared = sum(1 for block in req.blocks[:hit] if self.cache.refs(block))
        return self.used + req.reserve - self.block * shared <= self.budget

    def admit(self, req: Request) -> int:
        """Admit ``req``: hold its cached leading blocks, reserve the rest. Returns the
        prompt tokens the cache already holds (its hits)."""
        own = req.blocks if self.caching else ()
        hit = self.cache.match(own, self._limit(req.prompt)) if own else 0
        for block in own[:hit]:
            self.cache.acquire(block)
        private = req.reserve - self.block * hit
        self._holds[req.rid] = _Hold(own, hit, private)
        self._private += private
        if self.caching:
            self.queries += req.prompt
            self.hits += self.block * hit
        self._trim()
        return self.block * hit

    def computed(self, rid: int, tokens: int) -> None:
        """Request ``rid``'s first ``tokens`` prompt tokens are computed (or scheduled):
        register the full blocks they cover, so later requests can hit them."""
        hold = self._holds.get(rid)
        if hold is None or hold.held >= len(hold.blocks):
            return
        reach = min(len(hold.blocks), tokens // self.block)
        while hold.held < reach:
            self.cache.acquire(hold.blocks[hold.held])
            hold.held += 1
            hold.private -= self.block
            self._private -= self.block

    def release(self, *rids: int) -> None:
        """Requests ``rids`` finished or were cancelled: free their reservations and let
        their blocks go (tail first, so a request's leading blocks are evicted last)."""
        for rid in rids:
            hold = self._holds.pop(rid, None)
            if hold is None:
                continue
            for block in reversed(hold.blocks[: hold.held]):
                self.cache.release(block)
            self._private -= hold.private

    def reset(self) -> int:
        """Drop every cached block no running request holds (vLLM's ``/reset_prefix_cache``,
        SGLang's ``/flush_cache``); returns how many. Held blocks stay: a running request
        still reads them, and they become evictable when it ends."""
        return self.cache.evict(self.cache.idle)

    def _trim(self) -> None:
        """Evict least recently used idle blocks until the cache fits beside what is used."""
        room = self.budget - self.used
        over = self.cache.idle - max(0, room) // self.block
        if over > 0:
            self.evictions += self.cache.evict(over)


__all__ = ["BlockCache", "KVSpace", "Request"]
