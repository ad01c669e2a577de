"""The built-in prompts never repeat within a run, so a prefix cache cannot serve them.

A sweep sends far more than the 120 built-in prompts (the seed's 1..64 x 10 rounds is 1,270
requests); repeated verbatim, every request from the 121st on would find its whole prompt in
vLLM's, SGLang's or llama-server's prefix cache (all on by default) and the run would
measure the cache, not prefill.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from servecap.api.run.run import run_benchmark_async
from servecap.api.run.run_config import RunConfig
from servecap.core.config import ClientOptions
from servecap.sim import start_server_process
from servecap.workload.prompts import build_prompts
from servecap.workload.source import Strided, builtin_source, for_worker
from tests.sim.sim_metrics import sim_metrics

BLOCK_CHARS = 64  # one 16-token cache block by the 4-characters rule (vLLM's block size)

# the step model with vLLM's prefix cache, fast: 130 requests take a few seconds
CACHED_PROFILE = """
name = "cached"
model_id = "cached"
[params]
idle_window_ms = 0.0
step_base_ms = 1.0
prefill_ms_per_token = 0.01
prefix_caching = true
prefix_block_tokens = 16
"""


def texts(n: int, input_tokens: int = 64, seed: int = 0) -> list[str]:
    source = builtin_source(input_tokens, 4, seed)
    return [source.next_request().text for _ in range(n)]


def test_the_first_round_is_the_built_in_prompts_in_their_seeded_order() -> None:
    assert texts(120, seed=3) == [p.text for p in build_prompts(64, seed=3)]


def test_later_rounds_share_no_first_block_with_any_request() -> None:
    sent = texts(3 * 120)
    assert len({t[:BLOCK_CHARS] for t in sent}) == len(sent)
    assert sent[120].startswith("(2) ") and sent[240].startswith("(3) ")


def test_a_marked_prompt_keeps_its_length_to_within_a_word() -> None:
    first, later = texts(120), texts(360)[120:]
    for i, text in enumerate(later):
        original = first[i % 120]
        assert len(original) - 16 <= len(text) <= len(original), (original, text)


def test_a_prompt_shorter_than_its_mark_is_never_longer_than_asked() -> None:
    first, later = texts(120, input_tokens=2), texts(240, input_tokens=2)[120:]
    assert all(t.startswith("(2) ") for t in later)
    assert all(len(t) <= max(len(o), 4) for t, o in zip(later, first, strict=True))


def test_workers_deal_out_the_runs_requests_each_once() -> None:
    one = texts(240)
    workers = [for_worker(builtin_source(64, 4), k, 3) for k in range(3)]
    assert all(isinstance(w, Strided) for w in workers)
    dealt = [[w.next_request().text for _ in range(80)] for w in workers]
    assert [dealt[i % 3][i // 3] for i in range(240)] == one
    assert workers[2].request(5).text == one[5]  # a replay share's rows keep their index
    alone = builtin_source(64, 4)
    assert for_worker(alone, 0, 1) is alone


def cache_counters(base_url: str) -> tuple[float, float]:
    """The simulator's prefix-cache (queries, hits) in prompt tokens, so far."""
    seen = sim_metrics(base_url)
    return seen["vllm:prefix_cache_queries_total"], seen["vllm:prefix_cache_hits_total"]


@pytest.mark.slow
def test_a_sweep_past_one_round_finds_nothing_in_the_servers_prefix_cache(
    tmp_path: Path,
) -> None:
    profile = tmp_path / "cached.toml"
    profile.write_text(CACHED_PROFILE)
    config = RunConfig(
        concurrency=[10], rounds=13, input_tokens=64, output_tokens=2, warmup=0,
        out_dir=str(tmp_path), client=ClientOptions(base_url="http://127.0.0.1:1/v1"),
    )  # fmt: skip
    with start_server_process(str(profile)) as sim:
        config = config.model_copy(update={"client": ClientOptions(base_url=sim.base_url)})
        outcome = asyncio.run(run_benchmark_async(config))
        queries, hits = cache_counters(sim.base_url)
    (level,) = outcome.levels
    assert level.n_ok == 130
    assert queries >= 130 * 60  # every prompt was looked up (64 tokens each, near enough)
    assert hits == 0, f"{hits:.0f} of {queries:.0f} prompt tokens were served from the cache"
    # two worker processes on a cold server: each sends its share of the requests, not a copy
    with start_server_process(str(profile)) as sim:
        two = config.model_copy(update={
            "workers": 2, "rounds": 4, "client": ClientOptions(base_url=sim.base_url),
        })  # fmt: skip
        (level,) = asyncio.run(run_benchmark_async(two)).levels
        queries, hits = cache_counters(sim.base_url)
    assert level.n_ok == 40 and level.workers == 2
    assert queries >= 40 * 60
    assert hits == 0, f"{hits:.0f} of {queries:.0f} prompt tokens were served from the cache"
