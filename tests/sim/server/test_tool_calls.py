"""The simulator answers with a tool call where the request's tools and `tool_choice` ask
for one (or its profile's probability draws one), streams the call's arguments as its
tokens, and counts a call sent back as prompt text, so its prefix cache sees the growing
context of a tool loop."""

from __future__ import annotations

import json
import random
import urllib.request
from typing import Any

import pytest

from servecap.sim import start_server_in_thread
from servecap.sim.model.params import ModelParams
from servecap.sim.profiles import Profile
from servecap.sim.server.chunks import ChunkMaker
from servecap.sim.server.openai import SimRequest, parse_request
from servecap.sim.server.tool_calls import arguments, call_name

TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {}}},
         {"type": "function", "function": {"name": "read_file"}}]


@pytest.mark.parametrize("tokens", [1, 2, 3, 17])
def test_arguments_are_json_of_four_characters_a_token(tokens: int) -> None:
    args = arguments(tokens)
    assert len(args) == 4 * tokens
    assert isinstance(json.loads(args), dict)


@pytest.mark.parametrize(
    ("choice", "probability", "expected"),
    [
        ("required", 0.0, "search"),
        ({"type": "function", "function": {"name": "read_file"}}, 0.0, "read_file"),
        ("none", 1.0, None),
        ("auto", 1.0, "search"),
        ("auto", 0.0, None),
    ],
)
def test_when_the_answer_is_a_call(choice: Any, probability: float, expected: str | None) -> None:
    body = {"tools": TOOLS, "tool_choice": choice}
    assert call_name(body, probability, random.Random(0)) == expected
    assert call_name({"tool_choice": "required"}, 1.0, random.Random(0)) is None  # no tools


def test_auto_calls_at_the_profile_probability() -> None:
    rng = random.Random(3)
    calls = sum(call_name({"tools": TOOLS}, 0.3, rng) is not None for _ in range(4000))
    assert 0.27 < calls / 4000 < 0.33


def test_streamed_call_pieces_join_to_the_arguments() -> None:
    req = SimRequest(True, "m", 10, 5, True, True, False, 0, tool_call="search")
    maker = ChunkMaker(req, 9, 0)
    chunks = [maker.tokens(0, 2, False), maker.tokens(2, 3, True)]
    calls = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks]
    assert calls[0]["id"] == "call_sim_9" and calls[0]["function"]["name"] == "search"
    assert "id" not in calls[1]
    assert "".join(c["function"]["arguments"] for c in calls) == arguments(5)
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    whole = maker.whole(5)["choices"][0]
    assert whole["message"]["tool_calls"][0]["function"]["arguments"] == arguments(5)
    assert whole["finish_reason"] == "tool_calls" and whole["message"]["content"] is None


def test_a_call_sent_back_counts_as_its_tokens() -> None:
    call = {"id": "c", "type": "function", "function": {"name": "s", "arguments": arguments(6)}}
    base = [{"role": "user", "content": "x" * 40}]
    turns = [*base, {"role": "assistant", "content": None, "tool_calls": [call]},
             {"role": "tool", "tool_call_id": "c", "content": "y" * 20}]
    before = parse_request({"messages": base}, True, ["m"], 8, 0)
    after = parse_request({"messages": turns}, True, ["m"], 8, 0)
    assert after.prompt_tokens - before.prompt_tokens == 6 + 5
    assert isinstance(after.prompt, str) and after.prompt.startswith(str(before.prompt))


def _post(base_url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    request = urllib.request.Request(
        base_url + "/chat/completions", json.dumps(body).encode(),
        {"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        lines = response.read().decode().split("\n\n")
    return [json.loads(line[6:]) for line in lines if line.startswith("data: {")]


def test_the_server_streams_a_call_and_caches_the_growing_context() -> None:
    # the step model (the deterministic profile's fixed engine keeps no cache), no jitter
    profile = Profile(name="tools", model_id="tools", params=ModelParams.model_validate({
        "idle_window_ms": 0.0, "step_base_ms": 2.0, "prefix_caching": True,
        "prefix_block_tokens": 4}))
    with start_server_in_thread(profile, time_scale=20.0) as sim:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "z" * 400}]
        base = {"model": profile.model_id, "max_tokens": 6, "stream": True,
                "stream_options": {"include_usage": True}, "tools": TOOLS}
        chunks = _post(sim.base_url, {**base, "messages": messages, "tool_choice": "required"})
        pieces = [c["choices"][0]["delta"]["tool_calls"][0] for c in chunks
                  if c["choices"] and "tool_calls" in c["choices"][0]["delta"]]
        call = {"id": pieces[0]["id"], "type": "function", "function": {
            "name": pieces[0]["function"]["name"],
            "arguments": "".join(p["function"]["arguments"] for p in pieces)}}
        first_usage = chunks[-1]["usage"]
        messages += [{"role": "assistant", "content": None, "tool_calls": [call]},
                     {"role": "tool", "tool_call_id": call["id"], "content": "r" * 80}]
        chunks = _post(sim.base_url, {**base, "messages": messages, "tool_choice": "none"})
    second_usage = chunks[-1]["usage"]
    assert second_usage["prompt_tokens"] == first_usage["prompt_tokens"] + 6 + 20
    # the first call's whole prompt comes back from the cache (full blocks of 4 tokens)
    assert second_usage["prompt_tokens_details"]["cached_tokens"] >= 100
    text = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert not any("tool_calls" in d for d in text)  # "none": a text answer
