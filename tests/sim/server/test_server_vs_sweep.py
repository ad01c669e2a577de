"""The HTTP server and the pure sweep are driven by the same model: a closed loop over real
HTTP (time-scaled) gives the sweep's means (slow: a real-time comparison), and the time
scale runs the model that many times faster."""

from __future__ import annotations

import asyncio
import json
import time
from types import SimpleNamespace

import aiohttp
import numpy as np
import pytest

from servecap.sim.model.sweep import closed_loop_level
from servecap.sim.profiles import load_profile
from servecap.sim.server import engine_loop
from servecap.sim.server.runner import start_server_process

#: the clocks' rounding: a token is never earlier than its schedule by more than this
CLOCK_S = 0.001
PROMPT = "w" * 504  # with an 8-character serial: 128 prompt tokens by the ceil(chars / 4) rule


async def closed_loop(base: str, c: int, rounds: int, tokens: int) -> list[tuple[float, ...]]:
    """(ttft, itl, latency) per request in real seconds, c streams x rounds."""
    rows: list[tuple[float, ...]] = []
    serial = iter(range(10**8))

    async def one(session: aiohttp.ClientSession) -> None:
        for _ in range(rounds):
            # prompts that share nothing, as the sweep assumes (the seed profiles cache
            # prefixes: one repeated prompt would be served from the cache)
            body = {"prompt": f"{next(serial):08d}{PROMPT}", "max_tokens": tokens, "stream": True}
            stamps: list[float] = []
            counts: list[int] = []
            t0 = time.perf_counter()
            async with session.post(f"{base}/completions", json=body) as resp:
                async for line in resp.content:
                    if line.startswith(b'data: {"id"'):
                        stamps.append(time.perf_counter())
                        counts.append(len(json.loads(line[6:])["choices"][0]["text"].split()))
            n_after_first = sum(counts) - counts[0]  # one word per token
            rows.append((stamps[0] - t0, (stamps[-1] - stamps[0]) / n_after_first,
                         stamps[-1] - t0))  # fmt: skip

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        await asyncio.gather(*[one(session) for _ in range(c)])
    return rows


@pytest.mark.slow
# sglang-direct at c=2: both streams' first tokens wait for the second's prefill (the
# engine's output lag), which the server's engine loop must deliver as the sweep does
@pytest.mark.slow
@pytest.mark.parametrize(
    ("profile", "c"), [("vllm-direct", 8), ("vllm-spec", 4), ("sglang-direct", 2)]
)
def test_http_closed_loop_matches_the_sweep(profile: str, c: int) -> None:
    scale = 2.0  # client overhead (real ms) is magnified by the scale
    prof = load_profile(profile)
    want = np.mean(
        [
            [
                row["ttft_mean_ms"] / 1000,
                row["itl_mean_ms"] / 1000,
                row["latency_mean_s"],
            ]
            for row in (closed_loop_level(prof.params, c, 6, seed=s) for s in range(3))
        ],
        axis=0,
    )
    with start_server_process(profile, time_scale=scale) as server:
        asyncio.run(closed_loop(server.base_url, 1, 1, 8))  # warm-up
        got = np.mean(asyncio.run(closed_loop(server.base_url, c, 6, 128)), axis=0) * scale
    assert got[2] == pytest.approx(want[2], rel=0.12), (got, want)
    assert got[1] == pytest.approx(want[1], rel=0.15), (got, want)
    # TTFT of 6 rounds is noisy (admission gates): +-10% one sigma in the sweep itself
    assert got[0] == pytest.approx(want[0], rel=0.35, abs=0.03), (got, want)


def test_time_scale_runs_virtual_time_that_many_times_faster(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The loop's model time is its real time times the scale, on its own clock."""
    real = [100.0]
    monkeypatch.setattr(engine_loop, "time", SimpleNamespace(monotonic=lambda: real[0]))
    loop = engine_loop.EngineLoop(load_profile("deterministic").params, time_scale=5.0)
    real[0] += 0.2
    assert loop.virtual_now() == pytest.approx(1.0)


@pytest.mark.slow
def test_a_time_scaled_schedule_is_a_floor() -> None:
    """At 5x, every request's first token comes no sooner than 50 ms / 5 and its last no
    sooner than (50 + 29 x 10) ms / 5 (a busy machine only delays them)."""
    with start_server_process("deterministic", time_scale=5.0) as server:
        rows = asyncio.run(closed_loop(server.base_url, 2, 3, 30))
    assert len(rows) == 6
    assert all(ttft >= 0.010 - CLOCK_S for ttft, _, _ in rows)
    assert all(latency >= (0.050 + 29 * 0.010) / 5 - CLOCK_S for _, _, latency in rows)


@pytest.mark.parametrize("profile", ["vllm-direct", "sglang-direct"])
def test_client_turnaround_barely_moves_the_means(profile: str) -> None:
    """An HTTP client comes back a few ms after a response ends, not the sweep's ~0.5 ms;
    the model's admission must not turn those ms into a different mid-level TTFT (a fixed
    admission interval once flipped c=16 between lock-step cycles: -40% over HTTP)."""
    params = load_profile(profile).params
    for c in (2, 8, 16):
        fast, slow = (
            np.mean(
                [
                    closed_loop_level(params, c, 10, seed=s, **turnaround)["ttft_mean_ms"]
                    for s in range(3)
                ]
            )
            for turnaround in ({}, {"client_delay_ms": 5.0, "client_gap_ms": 2.0})
        )
        assert slow == pytest.approx(fast, rel=0.15), (c, fast, slow)
