"""The simulator's per-request cached tokens and its two prefix-cache resets, over real HTTP
on 127.0.0.1: usage's `prompt_tokens_details.cached_tokens` is what the request found
cached, and vLLM's `POST /reset_prefix_cache` and SGLang's `POST /flush_cache` empty it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from servecap.sim.server.runner import SimProcessHandle, start_server_process

PROFILE = """
name = "reset-test"
model_id = "reset-test"
[params]
idle_window_ms = 0.0
step_base_ms = 1.0
prefill_ms_per_token = 0.001
prefix_caching = {caching}
prefix_block_tokens = 16
"""
PROMPT = "0123-" + "p" * (4 * 160 - 5)  # 160 tokens, 10 full blocks of 16


def _serve(tmp: Path, caching: bool) -> Any:
    path = tmp / "reset-test.toml"
    path.write_text(PROFILE.format(caching=str(caching).lower()), encoding="utf-8")
    return start_server_process(str(path))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimProcessHandle]:
    with _serve(tmp_path_factory.mktemp("reset"), True) as handle:
        yield handle


async def _usage(session: aiohttp.ClientSession, url: str, stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"prompt": PROMPT, "max_tokens": 2, "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    async with session.post(url + "/completions", json=body) as resp:
        assert resp.status == 200
        if not stream:
            return dict((await resp.json())["usage"])
        usage: dict[str, Any] = {}
        async for raw in resp.content:
            if raw.startswith(b"data: {"):
                usage = json.loads(raw[6:]).get("usage") or usage
        return usage


async def _post(session: aiohttp.ClientSession, url: str) -> int:
    async with session.post(url) as resp:
        await resp.read()
        return resp.status


def _cached(usage: dict[str, Any]) -> int | None:
    details = usage.get("prompt_tokens_details")
    return details["cached_tokens"] if details is not None else None


def test_cached_tokens_and_both_resets(server: SimProcessHandle) -> None:
    root = server.base_url.removesuffix("/v1")

    async def scenario() -> list[int | None]:
        async with aiohttp.ClientSession() as session:
            seen = [_cached(await _usage(session, server.base_url, True))]
            seen.append(_cached(await _usage(session, server.base_url, True)))
            seen.append(_cached(await _usage(session, server.base_url, False)))
            assert await _post(session, root + "/reset_prefix_cache") == 200
            seen.append(_cached(await _usage(session, server.base_url, True)))
            seen.append(_cached(await _usage(session, server.base_url, True)))
            assert await _post(session, root + "/flush_cache") == 200
            seen.append(_cached(await _usage(session, server.base_url, False)))
            async with session.get(root + "/flush_cache") as resp:
                assert resp.status == 405  # a reset is a POST, as on the engines
        return seen

    # cold, then 9 blocks (the last prompt token is always computed), streamed or whole;
    # after each reset the same prompt misses again
    assert asyncio.run(scenario()) == [0, 144, 144, 0, 144, 0]


def test_no_details_when_the_profile_caches_nothing(tmp_path: Path) -> None:
    with _serve(tmp_path, False) as handle:

        async def scenario() -> tuple[dict[str, Any], int]:
            async with aiohttp.ClientSession() as session:
                usage = await _usage(session, handle.base_url, True)
                reset = await _post(session, handle.base_url.removesuffix("/v1") + "/flush_cache")
                return usage, reset

        usage, reset = asyncio.run(scenario())
    assert "prompt_tokens_details" not in usage
    assert reset == 200  # nothing to drop, still an answer
