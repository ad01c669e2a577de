"""The prefix cache (pure): reference counts, LRU eviction, the KV budget it shares, and what
it does to the step model's prefill (virtual time)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from servecap.sim.model.blocks import block_hashes
from servecap.sim.model.emissions import Emission
from servecap.sim.model.params import ModelParams
from servecap.sim.model.prefix_cache import BlockCache, KVSpace
from servecap.sim.model.step_engine import StepEngine
from servecap.sim.model.sweep import closed_loop_level

# -- BlockCache -----------------------------------------------------------------------------


def test_held_blocks_are_never_evicted() -> None:
    cache = BlockCache()
    for block in (1, 2, 3):
        cache.acquire(block)
    assert cache.evict(3) == 0 and len(cache) == 3 and cache.held == 3
    cache.release(2)
    assert cache.evict(3) == 1 and 2 not in cache and 1 in cache and 3 in cache


def test_eviction_is_least_recently_released_first() -> None:
    cache = BlockCache()
    for block in (1, 2, 3, 4):
        cache.acquire(block)
    for block in (3, 1, 4, 2):
        cache.release(block)
    cache.acquire(3)  # a hit takes it off the evictable list...
    cache.release(3)  # ...and releasing makes it the most recently used
    assert cache.evict(2) == 2
    assert [b in cache for b in (1, 2, 3, 4)] == [False, True, True, False]


def test_reference_counts_keep_a_shared_block() -> None:
    cache = BlockCache()
    cache.acquire(7)
    cache.acquire(7)
    cache.release(7)
    assert cache.refs(7) == 1 and cache.evict(1) == 0
    cache.release(7)
    assert cache.refs(7) == 0 and cache.idle == 1 and cache.evict(1) == 1


def test_match_counts_the_leading_cached_run() -> None:
    cache = BlockCache()
    for block in (10, 11, 13):
        cache.acquire(block)
    assert cache.match([10, 11, 12, 13], limit=9) == 2
    assert cache.match([10, 11, 12, 13], limit=1) == 1
    assert cache.match([13, 10], limit=9) == 2 and cache.match([12, 10], limit=9) == 0


# -- KVSpace ---------------------------------------------------------------------------------

B = 16


@dataclass
class Req:
    """A request as the KV space reads it."""

    rid: int
    reserve: int
    prompt: int
    blocks: tuple[int, ...]


def test_hits_are_leading_blocks_and_never_the_last_token() -> None:
    kv = KVSpace(10_000, B, caching=True)
    blocks = (1, 2, 3, 4)  # a 64-token prompt, 4 full blocks
    assert kv.admit(Req(0, 64 + 8, 64, blocks)) == 0
    kv.computed(0, 64)
    kv.release(0)
    # the same 64 tokens again: the last token is computed, so 3 blocks hit (48 tokens)
    assert kv.admit(Req(1, 64 + 8, 64, blocks)) == 48
    # a longer prompt extending it hits all 4
    assert kv.admit(Req(2, 80 + 8, 80, (*blocks, 5))) == 64
    # a different first block hits nothing even if later blocks are cached
    assert kv.admit(Req(3, 64 + 8, 64, (9, 2, 3, 4))) == 0


def test_blocks_register_as_their_prefill_is_scheduled() -> None:
    kv = KVSpace(10_000, B, caching=True)
    kv.admit(Req(0, 200, 100, (1, 2, 3, 4, 5, 6)))
    kv.computed(0, 40)  # 2 full blocks covered
    assert kv.cache.held == 2 and 3 not in kv.cache
    kv.admit(Req(1, 200, 100, (1, 2, 3, 4, 5, 6)))  # admitted meanwhile: hits only those 2
    assert kv.cache.refs(1) == 2 and kv.cache.refs(3) == 0


def test_shared_held_blocks_count_once_and_idle_blocks_do_not_block() -> None:
    kv = KVSpace(400, B, caching=True)
    blocks = tuple(range(10))  # 160 tokens
    kv.admit(Req(0, 200, 160, blocks))  # 160 prompt + 40 output
    kv.computed(0, 160)
    assert kv.used == 200
    # a second request sharing 9 held blocks (144 tokens) needs only 200 - 144 of new room
    assert kv.fits(Req(-1, 200, 160, blocks))
    assert kv.admit(Req(1, 200, 160, blocks)) == 144
    assert kv.used == 200 + 56
    kv.release(0)
    kv.release(1)
    assert kv.used == 0 and kv.cache.idle == 10
    # the cached blocks are evictable: a request of the whole budget still fits
    assert kv.fits(Req(-1, 400, 300, (99,)))
    kv.admit(Req(2, 400, 300, (99,)))
    assert kv.cache.idle == 0 and kv.evictions == 10


def test_fits_charges_idle_hits_but_not_held_ones() -> None:
    kv = KVSpace(1000, B, caching=True)
    kv.admit(Req(0, 100, 64, (1, 2, 3, 4)))
    kv.computed(0, 64)
    kv.release(0)  # blocks 1..4 cached, idle
    kv.admit(Req(1, 50, 40, (1, 2)))  # hits block 1 (the last token is computed), registers 2
    kv.computed(1, 40)
    assert [kv.cache.refs(b) for b in (1, 2, 3, 4)] == [1, 1, 0, 0]
    room = kv.budget - kv.used
    # a request hitting 1..4 shares the held 1 and 2 (32 tokens); idle 3 and 4 become its own
    assert kv.fits(Req(-1, room + 32, 80, (1, 2, 3, 4, 5)))
    assert not kv.fits(Req(-1, room + 33, 80, (1, 2, 3, 4, 5)))
    before = kv.used
    assert kv.admit(Req(2, room + 32, 80, (1, 2, 3, 4, 5))) == 64
    assert kv.used == before + room and kv.used == kv.budget


def test_eviction_makes_just_enough_room_tail_blocks_first() -> None:
    kv = KVSpace(320, B, caching=True)
    kv.admit(Req(0, 170, 160, tuple(range(10))))
    kv.computed(0, 160)
    kv.release(0)  # 10 idle blocks (160 tokens) in 320
    kv.admit(Req(1, 240, 230, (50,)))  # needs 240: 80 left, so 5 blocks stay
    assert kv.cache.idle == 5 and kv.evictions == 5
    assert [b in kv.cache for b in range(10)] == [True] * 5 + [False] * 5


def test_caching_off_is_the_plain_reservation() -> None:
    kv = KVSpace(300, B, caching=False)
    assert kv.admit(Req(0, 200, 160, tuple(range(10)))) == 0
    kv.computed(0, 160)
    assert kv.used == 200 and len(kv.cache) == 0
    assert not kv.fits(Req(-1, 200, 160, tuple(range(10))))
    kv.release(0)
    assert kv.used == 0


# -- the step model --------------------------------------------------------------------------

CACHED = ModelParams(
    idle_window_ms=0.0,
    step_base_ms=5.0,
    decode_ms_per_seq=0.5,
    prefill_ms_per_token=0.05,
    prefill_budget_tokens=2048,
    prefix_caching=True,
)


def run(engine: StepEngine, limit: int = 100_000) -> list[tuple[float, Emission]]:
    out: list[tuple[float, Emission]] = []
    for _ in range(limit):
        t = engine.next_time()
        if t is None:
            return out
        out += [(t, e) for e in engine.advance(t)]
    raise AssertionError("engine did not finish")


def ttfts(params: ModelParams, prompts: list[str], gap_s: float = 10.0) -> list[float]:
    """Virtual TTFT of each prompt, sent one at a time ``gap_s`` apart (no batching)."""
    eng = StepEngine(params)
    out: list[float] = []
    for i, text in enumerate(prompts):
        now = i * gap_s
        eng.add(i, -(-len(text) // 4), 4, now, block_hashes(text, params.prefix_block_tokens))
        first = next(t for t, e in run(eng) if e.first)
        out.append(first - now)
    return out


def unique(i: int, chars: int) -> str:
    return f"{i:08d}" + "u" * (chars - 8)


def test_a_shared_prefix_prefills_only_the_tail() -> None:
    prefix = "p" * (4 * 16_384)  # 16K tokens
    tails = [unique(i, 4 * 1024) for i in range(4)]
    shared = ttfts(CACHED, [prefix + t for t in tails])
    alone = ttfts(CACHED, [unique(i, 4 * 17_408) for i in range(4)])
    step = lambda tokens: 0.005 + 0.00005 * tokens  # noqa: E731 - one prefill step, seconds
    # 17K uncached tokens take 9 chunked steps (8 x 2048 + 1024); a cached prefix leaves 1
    assert alone == pytest.approx([8 * step(2048) + step(1024)] * 4)
    assert shared[0] == pytest.approx(alone[0])
    assert shared[1:] == pytest.approx([step(1024)] * 3)


def test_counters_count_queries_hits_and_every_prompt_token() -> None:
    eng = StepEngine(CACHED)
    text = "q" * 4 * 200  # 200 tokens, 12 full blocks
    for i in range(3):
        eng.add(i, 200, 2, 10.0 * i, block_hashes(text, 16))
        run(eng)
    c = eng.counters
    assert c.prefix_queries == 600
    assert c.prefix_hits == 2 * 192  # 12 blocks each after the first
    assert c.prompt_tokens == 600


def test_long_prompts_cost_prefill_in_proportion() -> None:
    params = CACHED.model_copy(update={"prefix_caching": False})
    short, long = (ttfts(params, [unique(0, 4 * n)])[0] for n in (2048, 32_768))
    assert long == pytest.approx(16 * short)  # 16 chunks of 2048, each a full step


def test_caching_changes_nothing_when_prompts_share_nothing() -> None:
    def events(caching: bool) -> list[tuple[float, Emission]]:
        params = CACHED.model_copy(update={"prefix_caching": caching, "jitter": 0.1})
        eng = StepEngine(params, seed=3)
        for i in range(40):
            text = unique(i, 4 * (100 + 37 * i))
            eng.add(i, 100 + 37 * i, 20 + i, 0.013 * i, block_hashes(text, 16))
        return run(eng)

    assert events(True) == events(False)


@pytest.mark.parametrize("name", ["vllm-direct", "sglang-spec"])
def test_seed_profiles_do_not_cache_and_caching_leaves_their_sweep(name: str) -> None:
    from servecap.sim.profiles import load_profile

    params = load_profile(name).params
    assert not params.prefix_caching  # calibrated without a cache (`--prefix-caching on`)
    on = params.model_copy(update={"prefix_caching": True})
    assert closed_loop_level(params, 16, 3, seed=1) == closed_loop_level(on, 16, 3, seed=1)
