"""The prefix cache over real HTTP on 127.0.0.1: shared prefixes lower TTFT, and /metrics
counts the queries and hits that were sent."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from servecap.sim.server.runner import SimProcessHandle, start_server_process

# step model, no jitter: a 17K-token prompt takes 9 chunked prefill steps (366 ms), the same
# prompt behind a cached 16K-token prefix one step of its 1K-token tail (22.5 ms)
PROFILE = """
name = "prefix-test"
model_id = "prefix-test"
[params]
idle_window_ms = 0.0
step_base_ms = 2.0
prefill_ms_per_token = 0.02
prefill_budget_tokens = 2048
prefix_caching = true
prefix_block_tokens = 16
"""
PREFIX = "p" * (4 * 16_384)  # 16K tokens by the 4-characters rule


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimProcessHandle]:
    path: Path = tmp_path_factory.mktemp("prefix") / "prefix-test.toml"
    path.write_text(PROFILE, encoding="utf-8")
    with start_server_process(str(path)) as handle:
        yield handle


def unique(i: int, chars: int) -> str:
    """Text that shares no block with any other ``unique`` text (a serial up front)."""
    return f"{i:08d}-" + "u" * (chars - 9)


async def send(session: aiohttp.ClientSession, url: str, body: dict[str, Any]) -> tuple[float, int]:
    """(TTFT in seconds, prompt tokens from the usage) of one streamed request."""
    body = {**body, "max_tokens": 2, "stream": True, "stream_options": {"include_usage": True}}
    t0 = time.perf_counter()
    ttft, prompt = 0.0, -1
    async with session.post(url, json=body) as resp:
        assert resp.status == 200
        async for raw in resp.content:
            if not raw.startswith(b"data: {"):
                continue
            event = json.loads(raw[6:])
            if event["choices"] and not ttft:
                ttft = time.perf_counter() - t0
            if event.get("usage"):
                prompt = event["usage"]["prompt_tokens"]
    return ttft, prompt


async def metrics(session: aiohttp.ClientSession, server: SimProcessHandle) -> dict[str, float]:
    async with session.get(server.base_url.removesuffix("/v1") + "/metrics") as resp:
        text = await resp.text()
    return {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples}


async def one_at_a_time(
    server: SimProcessHandle, bodies: list[dict[str, Any]], chat: bool = False
) -> tuple[list[tuple[float, int]], dict[str, float], dict[str, float]]:
    """Send ``bodies`` one after another; (ttft, prompt tokens) each and /metrics before and
    after."""
    url = f"{server.base_url}/{'chat/completions' if chat else 'completions'}"
    async with aiohttp.ClientSession() as session:
        before = await metrics(session, server)
        out = [await send(session, url, body) for body in bodies]
        after = await metrics(session, server)
    return out, before, after


def delta(before: dict[str, float], after: dict[str, float], name: str) -> float:
    return after[name] - before.get(name, 0.0)


@pytest.mark.slow
def test_a_shared_prefix_lowers_ttft_and_metrics_count_it(server: SimProcessHandle) -> None:
    tails = [unique(100 + i, 4 * 1024) for i in range(5)]
    unshared = [{"prompt": unique(i, len(PREFIX) + 4 * 1024)} for i in range(4)]
    shared = [{"prompt": PREFIX + tail} for tail in tails]
    rows, before, after = asyncio.run(one_at_a_time(server, unshared + shared))
    assert all(prompt == 17_408 for _, prompt in rows)
    alone = [ttft for ttft, _ in rows[:4]]
    first, cached = rows[4][0], [ttft for ttft, _ in rows[5:]]
    # modelled: 366 ms without a cached prefix, 22.5 ms with one; HTTP adds a few ms to both
    mean_alone = sum(alone) / len(alone)
    assert sum(cached) / len(cached) < mean_alone / 4, (alone, first, cached)
    assert first > mean_alone / 2  # the first of the shared prompts finds nothing cached
    # the counters count what was sent: every prompt token is queried, the 16K-token prefix
    # hits for each shared prompt after the first, and nothing else does
    assert delta(before, after, "vllm:prefix_cache_queries_total") == 9 * 17_408
    assert delta(before, after, "vllm:prefix_cache_hits_total") == 4 * 16_384
    assert delta(before, after, "vllm:prompt_tokens_total") == 9 * 17_408
    assert delta(before, after, "vllm:request_success_total") == 9


def test_a_chat_history_hits_its_earlier_turn(server: SimProcessHandle) -> None:
    system = {"role": "system", "content": unique(900, 4000)}
    turn1 = [system, {"role": "user", "content": "q" * 1000}]  # 5000 chars: 1250 tokens
    turn2 = [
        *turn1,
        {"role": "assistant", "content": "a" * 600},
        {"role": "user", "content": "r" * 400},
    ]
    rows, before, after = asyncio.run(
        one_at_a_time(server, [{"messages": turn1}, {"messages": turn2}], chat=True)
    )
    assert [prompt for _, prompt in rows] == [1250, 1500]
    assert delta(before, after, "vllm:prefix_cache_queries_total") == 2750
    # turn 1's 78 full blocks of 16 tokens are the start of turn 2
    assert delta(before, after, "vllm:prefix_cache_hits_total") == 78 * 16


def test_an_identical_prompt_recomputes_only_its_last_block(server: SimProcessHandle) -> None:
    body = {"prompt": unique(700, 4 * 160)}  # 160 tokens, 10 full blocks
    rows, before, after = asyncio.run(one_at_a_time(server, [body, body]))
    assert [prompt for _, prompt in rows] == [160, 160]
    assert delta(before, after, "vllm:prefix_cache_hits_total") == 9 * 16
