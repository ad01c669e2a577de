"""The simulator over real HTTP on 127.0.0.1, port 0 (aiohttp client)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from servecap.sim.profiles import Profile
from servecap.sim.server.runner import (
    SimProcessHandle,
    SimServerHandle,
    start_server_in_thread,
    start_server_process,
)

#: the clocks' rounding: a token is never earlier than its schedule by more than this
CLOCK_S = 0.001


@pytest.fixture(scope="module")
def det() -> Iterator[SimProcessHandle]:
    """A child process: no GIL shared with the measuring client, so timings are exact."""
    with start_server_process("deterministic") as handle:
        yield handle


@pytest.fixture(scope="module")
def spec() -> Iterator[SimServerHandle]:
    prof = Profile.model_validate(
        {
            "name": "tiny-spec",
            "model_id": "tiny",
            "params": {
                "step_base_ms": 2.0,
                "num_spec_tokens": 3,
                "acceptance": 0.8,
                "idle_window_ms": 0.0,
            },
        }
    )
    with start_server_in_thread(prof, time_scale=2.0) as handle:
        yield handle


CHAT = {"messages": [{"role": "user", "content": "x" * 40}], "max_tokens": 8, "stream": True}


async def stream(
    url: str, body: dict[str, Any], session: aiohttp.ClientSession | None = None
) -> list[tuple[float, dict[str, Any] | str]]:
    """(seconds since send, parsed event) for each SSE event."""
    if session is None:
        async with aiohttp.ClientSession() as own:
            return await stream(url, body, own)
    out: list[tuple[float, dict[str, Any] | str]] = []
    t0 = time.perf_counter()
    async with session.post(url, json=body) as resp:
        assert resp.status == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        async for raw in resp.content:
            line = raw.decode().strip()
            if line.startswith("data: "):
                data = line[6:]
                event = data if data == "[DONE]" else json.loads(data)
                out.append((time.perf_counter() - t0, event))
    return out


def token_events(events: list[tuple[float, Any]]) -> list[tuple[float, dict[str, Any]]]:
    return [
        (t, e)
        for t, e in events
        if isinstance(e, dict)
        and e["choices"]
        and (
            e["choices"][0].get("text")
            or e["choices"][0].get("delta", {}).get("content")
            or e["choices"][0].get("delta", {}).get("reasoning_content")
        )
    ]


@pytest.mark.slow
async def test_deterministic_schedule_is_a_floor(det: SimProcessHandle) -> None:
    """Every token of the 50 ms + 10 ms schedule arrives, in order, and none before its time
    (a busy machine only delays them; how closely they keep it is bench/client_overhead.py's)."""
    body = {**CHAT, "max_tokens": 20}
    events = await stream(f"{det.base_url}/chat/completions", body)
    toks = token_events(events)
    assert len(toks) == 20
    assert [t for t, _ in toks] == sorted(t for t, _ in toks)
    assert all(t >= 0.050 + k * 0.010 - CLOCK_S for k, (t, _) in enumerate(toks))
    assert toks[-1][1]["choices"][0]["finish_reason"] == "length"
    assert events[-1][1] == "[DONE]"


async def test_concurrent_streams_each_get_their_schedule(det: SimProcessHandle) -> None:
    body = {**CHAT, "max_tokens": 10}
    url = f"{det.base_url}/chat/completions"
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        results = await asyncio.gather(*[stream(url, body, session) for _ in range(16)])
    for events in results:
        toks = token_events(events)
        assert len(toks) == 10
        assert all(t >= 0.050 + k * 0.010 - CLOCK_S for k, (t, _) in enumerate(toks))


async def test_include_usage_then_done(det: SimProcessHandle) -> None:
    body = {**CHAT, "stream_options": {"include_usage": True}, "max_completion_tokens": 5}
    events = await stream(f"{det.base_url}/chat/completions", body)
    assert events[-1][1] == "[DONE]"
    final = events[-2][1]
    assert isinstance(final, dict) and final["choices"] == []
    assert final["usage"] == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    assert all("usage" not in e for _, e in events[:-2] if isinstance(e, dict))
    first = events[0][1]
    assert isinstance(first, dict) and first["choices"][0]["delta"] == {
        "role": "assistant",
        "content": "",
    }


async def test_continuous_usage_on_every_chunk(det: SimProcessHandle) -> None:
    opts = {"include_usage": True, "continuous_usage_stats": True}
    events = await stream(f"{det.base_url}/chat/completions", {**CHAT, "stream_options": opts})
    toks = token_events(events)
    assert [e["usage"]["completion_tokens"] for _, e in toks] == list(range(1, 9))


async def test_reasoning_tokens_come_first(det: SimProcessHandle) -> None:
    body = {**CHAT, "reasoning_tokens": 3, "max_tokens": 6}
    toks = token_events(await stream(f"{det.base_url}/chat/completions", body))
    deltas = [e["choices"][0]["delta"] for _, e in toks]
    assert all("reasoning_content" in d and "content" not in d for d in deltas[:3])
    assert all("content" in d and "reasoning_content" not in d for d in deltas[3:])


async def test_completions_endpoint_streams_text(det: SimProcessHandle) -> None:
    body = {"prompt": "abcdefghi", "max_tokens": 4, "stream": True, "ignore_eos": True}
    events = await stream(f"{det.base_url}/completions", body)
    toks = token_events(events)
    assert len(toks) == 4
    assert toks[0][1]["object"] == "text_completion"
    assert toks[-1][1]["choices"][0]["finish_reason"] == "length"


@pytest.mark.slow
async def test_non_streaming_chat_and_completions(det: SimProcessHandle) -> None:
    async with aiohttp.ClientSession() as s:
        t0 = time.perf_counter()
        async with s.post(f"{det.base_url}/chat/completions", json={**CHAT, "stream": False}) as r:
            body = await r.json()
        elapsed = time.perf_counter() - t0
        assert body["object"] == "chat.completion"
        assert body["usage"]["completion_tokens"] == 8
        assert len(body["choices"][0]["message"]["content"].split()) == 8
        assert elapsed >= 0.050 + 7 * 0.010 - CLOCK_S  # answered once the last token is due
        async with s.post(f"{det.base_url}/completions", json={"prompt": [1, 2, 3]}) as r:
            body = await r.json()
        assert body["usage"]["prompt_tokens"] == 3
        assert body["choices"][0]["finish_reason"] == "length"


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("chat/completions", {"max_tokens": 3}, 400),
        ("chat/completions", {"messages": "hi"}, 400),
        ("chat/completions", {**CHAT, "max_tokens": 0}, 400),
        ("chat/completions", {**CHAT, "model": "no-such-model"}, 404),
        ("completions", {"max_tokens": 3}, 400),
    ],
)
async def test_errors_are_openai_json(
    det: SimProcessHandle, path: str, body: dict[str, Any], status: int
) -> None:
    async with aiohttp.ClientSession() as s, s.post(f"{det.base_url}/{path}", json=body) as r:
        assert r.status == status
        err = (await r.json())["error"]
    assert set(err) == {"message", "type", "code"} and err["message"]


async def test_invalid_json_is_400(det: SimProcessHandle) -> None:
    async with (
        aiohttp.ClientSession() as s,
        s.post(f"{det.base_url}/chat/completions", data=b"{nope") as r,
    ):
        assert r.status == 400
        assert "JSON" in (await r.json())["error"]["message"]


async def test_models_and_version(det: SimProcessHandle) -> None:
    async with aiohttp.ClientSession() as s:
        async with s.get(f"{det.base_url}/models") as r:
            models = await r.json()
        async with s.get(det.base_url.removesuffix("/v1") + "/version") as r:
            version = await r.json()
    assert models["data"][0]["id"] == "servecap-sim-deterministic"
    assert models["data"][0]["servecap_sim"]["time_scale"] == 1.0
    assert version["profile"] == "deterministic" and version["time_scale"] == 1.0
    assert version["deployment"]["engine"] == "servecap-sim"


async def test_metrics_parse_and_count(spec: SimServerHandle) -> None:
    body = {"model": "tiny", "prompt": "y" * 400, "max_tokens": 40, "stream": True}
    await asyncio.gather(*[stream(f"{spec.base_url}/completions", body) for _ in range(3)])
    async with (
        aiohttp.ClientSession() as s,
        s.get(spec.base_url.removesuffix("/v1") + "/metrics") as r,
    ):
        text = await r.text()
    samples = {
        sample.name: sample.value
        for fam in text_string_to_metric_families(text)
        for sample in fam.samples
    }
    assert samples["vllm:generation_tokens_total"] == 120
    assert samples["vllm:prompt_tokens_total"] == 300
    assert samples["vllm:num_requests_running"] == 0
    assert samples["vllm:num_requests_waiting"] == 0
    assert 0 <= samples["vllm:kv_cache_usage_perc"] <= 1
    assert "vllm:gpu_cache_usage_perc" in samples
    drafts = samples["vllm:spec_decode_num_draft_tokens_total"]
    accepted = samples["vllm:spec_decode_num_accepted_tokens_total"]
    assert drafts > 0 and 0 < accepted <= drafts
    assert samples["sim:time_scale"] == 2.0


async def test_spec_sends_several_tokens_per_chunk(spec: SimServerHandle) -> None:
    body = {"model": "tiny", "prompt": "z", "max_tokens": 60, "stream": True}
    toks = token_events(await stream(f"{spec.base_url}/completions", body))
    sizes = [len(e["choices"][0]["text"].split()) for _, e in toks]
    assert sum(sizes) == 60 and max(sizes) > 1 and len(toks) < 60


async def test_client_disconnect_frees_the_request(det: SimProcessHandle) -> None:
    body = {**CHAT, "max_tokens": 10_000}  # 100 s: running long after the wait's limit
    async with (
        aiohttp.ClientSession() as s,
        s.post(f"{det.base_url}/chat/completions", json=body) as r,
    ):
        await r.content.readline()
    deadline = time.monotonic() + 10
    while (running := await _running(det.base_url)) != [0]:  # until the server notices
        assert time.monotonic() < deadline, running
        await asyncio.sleep(0.01)  # poll


async def _running(base_url: str) -> list[float]:
    """The simulator's running-requests gauge, from its /metrics."""
    async with (
        aiohttp.ClientSession() as s,
        s.get(base_url.removesuffix("/v1") + "/metrics") as r,
    ):
        text = await r.text()
    return [
        sample.value
        for fam in text_string_to_metric_families(text)
        for sample in fam.samples
        if sample.name == "vllm:num_requests_running"
    ]
