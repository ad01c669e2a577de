"""The sessions load kind end to end against real HTTP servers on 127.0.0.1: history on the
wire, per-request user/turn/think, the ramp as warm-up, the failed-turn rule, the summary's
sessions columns, and (slow) the response-time law on the simulator."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict

import pytest
from aiohttp import web
from typer.testing import CliRunner

from servecap.api.run.run import Secrets, run_benchmark, run_benchmark_async
from servecap.api.run.run_config import RunConfig
from servecap.cli.main import app as cli_app
from servecap.core.config import ClientOptions
from servecap.kinds.sessions import SessionsLoad
from servecap.sim import builtin_profile, start_server_in_thread
from servecap.storage.runs import load_run
from servecap.workload.source import builtin_source
from tests.servers.app_thread import AppThread


def chat_app(seen: list[list[dict[str, str]]], fail_every: int = 0) -> web.Application:
    """Streams `answer-K` (K = the request's arrival number) and keeps every `messages`."""

    async def models(_: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "m"}]})

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        seen.append(body["messages"])
        k = len(seen)
        if fail_every and k % fail_every == 0:
            return web.json_response({"error": "boom"}, status=500)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await asyncio.sleep(0.01)  # pace: the fake server's answer time
        for piece in (f"answer-{k}", " done"):
            delta = {"choices": [{"index": 0, "delta": {"content": piece}}]}
            await response.write(b"data: " + json.dumps(delta).encode() + b"\n\n")
        usage = {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
        await response.write(b"data: " + json.dumps(usage).encode() + b"\n\ndata: [DONE]\n\n")
        return response

    app = web.Application()
    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/chat/completions", chat)
    return app


def sessions_config(base_url, out, **load):
    spec = {"users": [3], "think": "fixed:0.05", "turns": "3", "ramp_s": 0.1,
            "duration_s": 1.0, **load}
    return RunConfig(
        name="s", warmup=0, output_tokens=4, input_tokens=32, out_dir=str(out),
        client=ClientOptions(base_url=base_url), load=SessionsLoad(**spec),
    )


def rows_of(run_dir):
    return [json.loads(line) for line in (run_dir / "requests.jsonl").open()]


@pytest.mark.slow
def test_history_carries_earlier_turns_and_answers(tmp_path):
    seen: list[list[dict[str, str]]] = []
    with AppThread(chat_app(seen)) as server:
        outcome = asyncio.run(run_benchmark_async(sessions_config(server.base_url, tmp_path)))
    rows = rows_of(outcome.run_dir)
    assert rows and {r["user"] for r in rows} == {0, 1, 2}
    turns = [messages[-1]["content"] for messages in seen]
    assert len(set(turns)) == len(turns)  # each turn its own: no user repeats another's
    # and none is a prompt a sweep of the same seed sent (its verify run follows it)
    sweep = builtin_source(32, 4)
    assert not set(turns) & {sweep.request(i).text for i in range(2000)}
    for messages in seen:
        roles = [m["role"] for m in messages]
        assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"]
        assert len(messages) <= 2 * 3 - 1  # three turns, then a new conversation
        for m in messages[1::2]:  # each earlier answer exactly as it streamed
            assert m["content"].startswith("answer-") and m["content"].endswith(" done")
    for row in rows:
        assert 1 <= row["turn"] <= 3 and row["level"] == "users=3"
        first = row["turn"] == 1 and row["conversation"] == 0
        assert (row.get("think_before_s") is None) == first
        if not first:
            assert row["think_before_s"] == 0.05
        assert row["think_after_s"] == 0.05
    assert any(r["warmup"] for r in rows) and not all(r["warmup"] for r in rows)
    (level,) = load_run(outcome.run_dir).levels
    assert level.users == 3 and level.n_requests == sum(not r["warmup"] for r in rows)
    assert set(level.ttft_by_turn_ms or {}) <= {"1", "2", "3"}
    assert level.mean_concurrency is not None and level.law_concurrency is not None


@pytest.mark.slow
def test_failed_turn_ends_the_conversation(tmp_path):
    seen: list[list[dict[str, str]]] = []
    with AppThread(chat_app(seen, fail_every=4)) as server:
        config = sessions_config(server.base_url, tmp_path, users=[1], ramp_s=0.0)
        outcome = asyncio.run(run_benchmark_async(config))
    rows = sorted(rows_of(outcome.run_dir), key=lambda r: r["sent_at"])
    failed = [i for i, r in enumerate(rows) if r["status"] == "failed"]
    assert failed, "the server failed every 4th request"
    for i in failed:
        if i + 1 < len(rows):
            after = rows[i + 1]
            assert after["turn"] == 1 and after["conversation"] == rows[i]["conversation"] + 1
    convs: dict[int, list[int]] = defaultdict(list)
    for r in rows:
        convs[r["conversation"]].append(r["turn"])
    assert all(turns == list(range(1, len(turns) + 1)) for turns in convs.values())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--users", "5", "--concurrency", "4"], "--users and --concurrency"),
        (["--users", "5", "--think-time", "exp:-3"], "--think-time"),
        (["--users", "5", "--think-time", "gauss:3"], "--think-time"),
        (["--users", "5", "--turns", "uniform:5:2"], "--turns"),
        (["--users", "0"], "--users"),
        (["--users", "5", "--endpoint", "completions"], "--endpoint chat"),
        (["--duration", "5"], "--duration needs --users"),
    ],
)
def test_bad_sessions_input_exits_2_before_any_load(args, message):
    # 127.0.0.1:9 (discard) is never contacted: input is refused before preflight.
    result = CliRunner().invoke(
        cli_app, ["run", "--base-url", "http://127.0.0.1:9/v1", *args]
    )
    assert result.exit_code == 2, result.output
    assert message in result.output and "cannot reach" not in result.output


@pytest.mark.slow
def test_law_holds_on_the_simulator(tmp_path):
    """vllm-direct at time scale 10: mean concurrency within 5% of N*R/(R+Z), its own R, Z."""
    handle = start_server_in_thread(builtin_profile("vllm-direct"), time_scale=10.0)
    try:
        config = sessions_config(
            handle.base_url, tmp_path, users=[40], think="exp:3", turns="uniform:2:8",
            ramp_s=3.0, duration_s=40.0,
        ).model_copy(update={"output_tokens": 64, "input_tokens": 64})
        outcome = run_benchmark(config, Secrets())
    finally:
        handle.stop()
    (level,) = outcome.levels
    assert level.n_failed == 0 and level.n_ok and level.n_ok > 200
    assert level.law_error is not None and abs(level.law_error) < 0.05, level


SHAREGPT = [
    {"id": "a", "conversations": [
        {"from": "system", "value": "be brief"}, {"from": "human", "value": "a1"},
        {"from": "gpt", "value": "recorded answer"}, {"from": "human", "value": "a2"},
        {"from": "gpt", "value": "x"}, {"from": "human", "value": "a3"}]},
    {"id": "b", "conversations": [
        {"from": "human", "value": "b1"}, {"from": "gpt", "value": "y"},
        {"from": "human", "value": "b2"}]},
]


def sharegpt_file(tmp_path):
    path = tmp_path / "chats.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in SHAREGPT))
    return path


@pytest.mark.slow
def test_dataset_conversations_supply_the_user_turns(tmp_path):
    """Each conversation's human turns, in order, with the server's answers (never the
    recorded ones) between them; `--turns all` (the default with --dataset) sends them all."""
    seen: list[list[dict[str, str]]] = []
    path = sharegpt_file(tmp_path)
    with AppThread(chat_app(seen)) as server:
        result = CliRunner().invoke(cli_app, [
            "run", "--base-url", server.base_url, "--users", "2", "--think-time", "fixed:0.02",
            "--ramp-s", "0", "--duration", "1", "--dataset", str(path), "--warmup", "0",
            "--out", str(tmp_path / "out"), "--server-metrics", "off", "--name", "ds",
        ])
    assert result.exit_code == 0, result.output
    conversations = {"a1": ["a1", "a2", "a3"], "b1": ["b1", "b2"]}
    assert seen
    for messages in seen:
        users = [m["content"] for m in messages if m["role"] == "user"]
        assert users == conversations[users[0]][: len(users)]
        assert all(m["content"].startswith("answer-")
                   for m in messages if m["role"] == "assistant")
    (run_dir,) = (tmp_path / "out").glob("ds-*")
    rows = rows_of(run_dir)
    by_conv: dict[tuple[int, int], list[int]] = defaultdict(list)
    for r in rows:
        by_conv[r["user"], r["conversation"]].append(r["turn"])
    finished = [turns for turns in by_conv.values() if max(turns) in (2, 3)]
    assert finished and max(max(t) for t in by_conv.values()) <= 3
    info = json.loads((run_dir / "run.json").read_text())
    assert info["config"]["load"]["turns"] == "all"


@pytest.mark.slow
def test_turns_caps_a_dataset_conversation(tmp_path):
    seen: list[list[dict[str, str]]] = []
    path = sharegpt_file(tmp_path)
    with AppThread(chat_app(seen)) as server:
        result = CliRunner().invoke(cli_app, [
            "run", "--base-url", server.base_url, "--users", "2", "--think-time", "fixed:0.02",
            "--ramp-s", "0", "--duration", "0.6", "--dataset", str(path), "--turns", "1",
            "--warmup", "0", "--out", str(tmp_path / "out"), "--server-metrics", "off",
        ])
    assert result.exit_code == 0, result.output
    assert seen and all(len(m) == 1 and m[0]["content"] in ("a1", "b1") for m in seen)


def test_turns_all_needs_a_dataset():
    result = CliRunner().invoke(cli_app, ["run", "--base-url", "http://127.0.0.1:9/v1",
                                          "--users", "2", "--turns", "all"])
    assert result.exit_code == 2 and "needs --dataset" in result.output, result.output


@pytest.mark.slow
def test_a_level_ends_on_time_though_some_users_would_start_after_it(tmp_path):
    # With exp:600 thinks most users' first turns (steady-state offsets, mean 600 s) fall
    # after this 1 s level: they never send, and the level must not wait for them.
    seen: list[list[dict[str, str]]] = []
    with AppThread(chat_app(seen)) as server:
        config = sessions_config(server.base_url, tmp_path, users=[200], think="exp:600",
                                 ramp_s=0.0)
        outcome = asyncio.run(asyncio.wait_for(run_benchmark_async(config), timeout=60))
    rows = rows_of(outcome.run_dir)
    # 1 - exp(-1/600) of 200 users is about 0.3: a handful at most start within the second
    assert len(rows) < 20 and len(seen) == len(rows)
