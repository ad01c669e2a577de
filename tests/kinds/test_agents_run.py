"""The agents load kind end to end against real HTTP servers on 127.0.0.1: the tool loop on
the wire, each call's context growing by exactly what the agent appended (on the simulator,
which answers with tool calls), the agent's own calls where the server answers in text, and
(slow) the response-time law for agents: tasks/s = N / (task time + idle)."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from servecap.api.run.run import run_benchmark_async
from servecap.api.run.run_config import RunConfig
from servecap.core.config import ClientOptions
from servecap.kinds.agents import AgentsLoad
from servecap.sim import builtin_profile, start_server_in_thread
from servecap.sim.model.params import ModelParams
from servecap.sim.profiles import Profile
from servecap.storage.runs import load_run
from servecap.workload.agents import AgentDraws
from tests.servers.app_thread import AppThread


def agents_config(base_url: str, out: Path, **load: Any) -> RunConfig:
    spec = {"agents": [3], "depth": "uniform:1:4", "tool_latency": "exp:0.01",
            "tool_result_tokens": "uniform:5:60", "idle": "exp:0.02", "duration_s": 1.0,
            **load}
    return RunConfig(
        name="a", warmup=0, output_tokens=6, input_tokens=48, out_dir=str(out),
        client=ClientOptions(base_url=base_url), load=AgentsLoad(**spec),
    )


def rows_of(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "requests.jsonl").open()]


def tasks_of(rows: list[dict[str, Any]]) -> dict[tuple[int, int], list[dict[str, Any]]]:
    tasks: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        tasks[(row["user"], row["conversation"])].append(row)
    return {k: sorted(v, key=lambda r: r["turn"]) for k, v in tasks.items()}


def tool_sim(probability: float = 1.0) -> Any:
    profile = builtin_profile("deterministic").model_copy(
        update={"tool_call_probability": probability})
    return start_server_in_thread(profile, time_scale=10.0)


@pytest.mark.slow
def test_each_call_grows_the_context_by_what_was_appended(tmp_path: Path) -> None:
    with tool_sim() as sim:
        outcome = asyncio.run(run_benchmark_async(agents_config(sim.base_url, tmp_path)))
    tasks = tasks_of(rows_of(outcome.run_dir))
    assert len(tasks) >= 6 and {agent for agent, _ in tasks} == {0, 1, 2}
    whole = 0
    for calls in tasks.values():
        depth = calls[0]["depth"]
        assert [c["turn"] for c in calls] == list(range(1, len(calls) + 1))
        assert len(calls) <= depth + 1 and all(c["status"] == "ok" for c in calls)
        whole += len(calls) == depth + 1
        for before, after in zip(calls, calls[1:], strict=False):
            assert before["tool_call"] == "server" and before["finish_reason"] == "tool_calls"
            assert before["tool_wait_s"] >= 0
            # the server's own count: grown by the call's output and the drawn result
            assert after["prompt_tokens"] - before["prompt_tokens"] == after["appended_tokens"]
            assert after["appended_tokens"] > before["completion_tokens"]
            assert after["input_tokens_sent"] - before["input_tokens_sent"] == (
                after["appended_tokens"])
        if len(calls) == depth + 1:  # the final answer is text, then the idle time
            assert calls[-1]["finish_reason"] == "length" and "tool_call" not in calls[-1]
            assert calls[-1]["think_after_s"] >= 0
    assert whole >= 6  # tasks in flight at the level's end still finish
    (level,) = load_run(outcome.run_dir).levels
    block = level.kind_block or {}
    assert block["agents"] == 3 and block["tasks_whole"] >= 1
    by_call = block["by_call"]
    assert by_call["1"]["context_tokens_mean"] < by_call["2"]["context_tokens_mean"]
    task = block["task"]
    assert task["server_share"] + task["tools_share"] == pytest.approx(1.0, abs=1e-6)
    assert 2 <= task["calls_mean"] <= 5


@pytest.mark.slow
def test_the_prefix_cache_serves_the_growing_context(tmp_path: Path) -> None:
    # the step model with a prefix cache (the deterministic profile's engine keeps none)
    profile = Profile(name="agents", model_id="agents", tool_call_probability=1.0,
                      params=ModelParams.model_validate({
                          "idle_window_ms": 0.0, "step_base_ms": 2.0, "prefix_caching": True,
                          "prefix_block_tokens": 4}))
    with start_server_in_thread(profile, time_scale=10.0) as sim:
        config = agents_config(sim.base_url, tmp_path, depth="3")
        outcome = asyncio.run(run_benchmark_async(config))
    # each call sends the last call's context again, which the cache holds (all but a
    # partial last block of 4 tokens)
    for calls in tasks_of(rows_of(outcome.run_dir)).values():
        for before, after in zip(calls, calls[1:], strict=False):
            assert after["cached_tokens"] >= before["prompt_tokens"] - 4
    (level,) = load_run(outcome.run_dir).levels
    by_call = (level.kind_block or {})["by_call"]
    shares = [by_call[call]["cache_hit_share"] for call in ("1", "2", "3", "4")]
    assert shares == sorted(shares) and shares[-1] > 0.6, by_call  # grows with the context


@pytest.mark.slow
def test_a_context_past_the_budget_is_compacted_by_one_extra_call(tmp_path: Path) -> None:
    with tool_sim() as sim:
        config = agents_config(sim.base_url, tmp_path, depth="4", tool_result_tokens="60",
                               context_budget=150, summary_tokens=40)
        outcome = asyncio.run(run_benchmark_async(config))
    tasks = tasks_of(rows_of(outcome.run_dir))
    compactions = 0
    for calls in tasks.values():
        calls.sort(key=lambda r: (r["turn"], not r.get("compaction")))
        for before, after in zip(calls, calls[1:], strict=False):
            if before.get("compaction"):  # the summary alone is the next call's context
                assert after["turn"] == before["turn"] and after["prompt_tokens"] == 40
                assert before["max_tokens_sent"] == 40 and "appended_tokens" not in after
                continue
            # a compaction sends the context past the budget plus its 16-token instruction
            grown = after["prompt_tokens"] - before["prompt_tokens"]
            assert grown == after["appended_tokens"]
            if after.get("compaction"):
                compactions += 1
                assert before["input_tokens_sent"] + grown - 16 > 150
            else:
                assert after["input_tokens_sent"] <= 150 or after["turn"] == 2
    assert compactions >= 3
    (level,) = load_run(outcome.run_dir).levels
    block = level.kind_block or {}
    assert block["task"]["compactions_mean"] > 0
    assert set(block["by_call"]) == {"1", "2", "3", "4", "5"}  # compactions left out


@pytest.mark.slow
def test_a_task_fans_out_to_sub_agents_whose_answers_join_its_context(tmp_path: Path) -> None:
    with tool_sim() as sim:
        config = agents_config(sim.base_url, tmp_path, depth="2", fan_out="uniform:2:3")
        outcome = asyncio.run(run_benchmark_async(config))
    tasks = tasks_of(rows_of(outcome.run_dir))
    spawned = 0
    for calls in tasks.values():
        own = [c for c in calls if "sub_agent" not in c]
        subs: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for c in calls:
            if "sub_agent" in c:
                subs[c["sub_agent"]].append(c)
        if len(own) < 2:
            continue
        spawned += 1
        assert own[0]["tool_call"] == "spawn" and 2 <= len(subs) <= 3
        answers = 0
        for j, chain in subs.items():  # each sub-agent a whole chain of its own draws
            assert [c["turn"] for c in chain] == list(range(1, chain[0]["depth"] + 2))
            assert chain[0]["sent_at"] >= own[0]["ended_at"]
            assert chain[-1]["ended_at"] <= own[1]["sent_at"]
            answers += chain[-1]["completion_tokens"]
        # the sub-agents' answers, each as long as its server wrote it, join the context
        assert own[1]["appended_tokens"] == own[0]["completion_tokens"] + answers
        assert own[1]["prompt_tokens"] - own[0]["prompt_tokens"] == own[1]["appended_tokens"]
    assert spawned >= 2
    (level,) = load_run(outcome.run_dir).levels
    block = level.kind_block or {}
    assert block["task"]["sub_agents_mean"] >= 2 and block["task"]["sub_agents_share"] > 0
    assert set(block["by_call"]) == {"1", "2", "3"}  # the task's own calls only


@pytest.mark.slow
def test_agents_split_over_worker_processes_run_each_agent_once(tmp_path: Path) -> None:
    with tool_sim() as sim:
        config = agents_config(sim.base_url, tmp_path, agents=[4], depth="2")
        config = config.model_copy(update={"workers": 2})
        outcome = asyncio.run(run_benchmark_async(config))
    (level,) = outcome.levels
    assert level.workers == 2
    tasks = tasks_of(rows_of(outcome.run_dir))
    assert {agent for agent, _ in tasks} == {0, 1, 2, 3}
    for calls in tasks.values():  # every task's calls once, in order, from one process
        assert [c["turn"] for c in calls] == list(range(1, len(calls) + 1))
    # a task draws the same in any process: agent 3's first task as one process draws it
    draw = AgentDraws.parse("2", "exp:0.01", "uniform:5:60", "exp:0.02", 0).task(3, 0)
    first = tasks[(3, 0)]
    if len(first) == 3:
        assert first[2]["appended_tokens"] == (
            first[1]["completion_tokens"] + draw.tool_result_tokens[1])


def loop_app(seen: list[dict[str, Any]]) -> web.Application:
    """Answers every call in text (never a tool call) and keeps every request body."""

    async def models(_: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "m"}]})

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        seen.append(body)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for piece in (f"answer-{len(seen)}", " done"):
            delta = {"choices": [{"index": 0, "delta": {"content": piece}}]}
            await response.write(b"data: " + json.dumps(delta).encode() + b"\n\n")
        usage = {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
        await response.write(b"data: " + json.dumps(usage).encode() + b"\n\ndata: [DONE]\n\n")
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/v1/models", models)
    return app


@pytest.mark.slow
def test_the_agent_calls_the_tool_where_the_server_answers_in_text(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    tools = [{"type": "function", "function": {"name": "grep", "parameters": {}}}]
    with AppThread(loop_app(seen)) as server:
        config = agents_config(server.base_url, tmp_path, agents=[2], depth="2", tools=tools)
        outcome = asyncio.run(run_benchmark_async(config))
    assert seen
    for body in seen:
        assert body["tools"] == tools
        messages = body["messages"]
        calls = (len(messages) - 1) // 2 + 1  # the task's prompt, then 2 turns a tool call
        assert messages[0]["role"] == "user"
        assert body["tool_choice"] == ("none" if calls == 3 else "auto")
        for k in range(1, len(messages), 2):
            assistant, result = messages[k], messages[k + 1]
            assert assistant["role"] == "assistant" and assistant["content"].startswith("answer-")
            (call,) = assistant["tool_calls"]
            assert call["function"]["name"] == "grep"
            assert result == {"role": "tool", "content": result["content"],
                              "tool_call_id": call["id"]}
    rows = rows_of(outcome.run_dir)
    made = [r for r in rows if r.get("tool_call")]
    assert made and {r["tool_call"] for r in made} == {"drawn"}


@pytest.mark.slow
def test_tasks_per_second_follow_the_response_time_law(tmp_path: Path) -> None:
    with tool_sim() as sim:
        config = agents_config(sim.base_url, tmp_path, agents=[8], depth="uniform:1:3",
                               tool_latency="exp:0.03", idle="exp:0.1", ramp_s=1.0,
                               duration_s=10.0, seed=5)
        outcome = asyncio.run(run_benchmark_async(config))
    (level,) = load_run(outcome.run_dir).levels
    block = level.kind_block or {}
    assert block["tasks_whole"] >= 200
    # measured tasks/s against N / (mean task time + mean idle), from the run's own numbers
    assert abs(block["tasks_per_s_law_error"]) <= 0.05, block
    assert block["tasks_per_s"] == pytest.approx(
        8 / (block["task"]["time_s_mean"] + block["idle_mean_s"]), rel=0.05)
    # Little's law on the server: N agents / agents per stream = the streams they kept busy
    assert level.served_concurrency is not None
    assert 8 / block["agents_per_stream"] == pytest.approx(level.served_concurrency, rel=0.05)
