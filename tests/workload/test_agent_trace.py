"""Agentic traces (`workload.agent_trace`): a generated JSONL file of recorded tasks parses
to each task's tool latencies, result sizes, first prompt and answer lengths; a bad file
names the setting and the line; and a run of agents on the simulator replays them, task by
task."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servecap.cli.main import app as cli_app
from servecap.core.errors import SettingError
from servecap.sim import builtin_profile, start_server_in_thread
from servecap.storage.run_dir import REQUESTS_FILE, iter_records
from servecap.workload.agent_trace import (
    TraceTask,
    parse_agent_trace,
    tasks_of_json,
    trace_json,
)
from servecap.workload.agents import AgentDraws

PREFIX, PROMPT = 20, 480  # the first call: a system prompt it reuses and its own text


def generated_trace(seed: int, tasks: int) -> tuple[str, list[TraceTask]]:
    """A trace of `tasks` tasks of random depth (answers of 0 to 50 tokens: 0 leaves the
    length to the run), its lines shuffled within the file (a task's calls need not be
    adjacent), and the shapes it should parse to."""
    rng = random.Random(seed)
    lines, expected = [], []
    for task in range(tasks):
        depth = rng.randint(1, 4)
        outputs = [rng.randint(0, 50) for _ in range(depth + 1)]
        results = [rng.randint(1, 300) for _ in range(depth)]
        latencies_ms = [[rng.randint(0, 900) for _ in range(rng.randint(1, 2))]
                        for _ in range(depth)]
        prefix = PREFIX
        for call in range(depth + 1):
            appended = PROMPT if call == 0 else outputs[call - 1] + results[call - 1]
            tools = ([{"name": "grep", "tool_wall_latency_ms": ms}
                      for ms in latencies_ms[call]] if call < depth else [])
            lines.append({"task_id": f"t{task}", "call_index": call, "prefix_tokens": prefix,
                          "newly_append_tokens": appended, "output_tokens": outputs[call],
                          "tools": tools})
            prefix += appended + outputs[call]
        expected.append(TraceTask(tuple(sum(ms) / 1000 for ms in latencies_ms),
                                  tuple(results), PREFIX + PROMPT, tuple(outputs)))
    first = lines[0]
    rest = lines[1:]
    rng.shuffle(rest)
    # tasks in order, each one's calls shuffled (the sort is stable): t0's call 0 first
    ordered = [first, *sorted(rest, key=lambda row: int(row["task_id"][1:]))]
    return "\n".join(json.dumps(row) for row in ordered) + "\n", expected


def test_a_generated_trace_parses_to_its_tasks_shapes() -> None:
    text, expected = generated_trace(seed=5, tasks=12)
    tasks = parse_agent_trace(text, "trace.jsonl")
    assert list(tasks) == expected
    assert tasks_of_json(trace_json(tasks)) == tasks


def test_calls_out_of_order_within_a_task_are_ordered_by_call_index() -> None:
    rows = [{"task_id": 1, "call_index": 1, "newly_append_tokens": 90, "output_tokens": 5},
            {"task_id": 1, "call_index": 0, "newly_append_tokens": 10, "output_tokens": 30,
             "tools": [{"tool_wall_latency_ms": 250}]}]
    text = "\n".join(map(json.dumps, rows))
    # 90 appended - 30 output; the first prompt is call 0's 10 tokens
    assert parse_agent_trace(text, "t") == (TraceTask((0.25,), (60,), 10, (30, 5)),)


def test_agent_task_t_replays_trace_task_a_plus_t_n_mod_t() -> None:
    trace = (TraceTask((0.1,), (10,)), TraceTask((0.2, 0.3), (20, 30), 64, (0, 7, 9)),
             TraceTask((), ()))
    draws = AgentDraws.parse("5", "exp:1", "100", "exp:1", seed=1)
    draws = type(draws)(**{**{f: getattr(draws, f) for f in draws.__slots__},
                           "trace": trace, "agents": 2})
    assert draws.task(0, 0).tool_latency_s == (0.1,)
    assert draws.task(1, 0).tool_result_tokens == (20, 30)
    assert draws.task(1, 0).prompt_tokens == 64
    assert [draws.task(1, 0).max_tokens(call, 4) for call in (1, 2, 3)] == [4, 7, 9]
    assert draws.task(0, 1).depth == 0  # (0 + 1 x 2) mod 3 = 2: a single answer
    assert draws.task(1, 1).depth == 1  # (1 + 2) mod 3 = 0


@pytest.mark.parametrize(
    ("text", "says"),
    [("", "no calls"), ("not json", "line 1: not JSON"), ('{"call_index": 0}', "task_id"),
     ('{"task_id": 1, "call_index": -1}', "call_index must be"),
     ('{"task_id": 1, "newly_append_tokens": 1.5}', "newly_append_tokens must be"),
     ('{"task_id": 1}\n{"task_id": 1}', "each call_index once"),
     ('{"task_id": 1, "tools": [{"tool_wall_latency_ms": -3}]}\n'
      '{"task_id": 1, "call_index": 1}', "tool_wall_latency_ms must be")],
)
def test_a_bad_trace_names_the_setting_and_the_line(text: str, says: str) -> None:
    with pytest.raises(SettingError) as caught:
        parse_agent_trace(text, "trace.jsonl")
    assert caught.value.settings == ("agent_trace",) and says in str(caught.value)


def test_the_cli_refuses_a_bad_trace_or_a_draw_it_replaces(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text("not json\n")
    nowhere = ["run", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "o")]
    bad = CliRunner().invoke(cli_app, [*nowhere, "--agents", "2", "--agent-trace", str(path)])
    assert bad.exit_code == 2 and "--agent-trace" in bad.output and "line 1" in bad.output
    path.write_text(generated_trace(1, 2)[0])
    both = CliRunner().invoke(cli_app, [*nowhere, "--agents", "2", "--agent-trace", str(path),
                                        "--agent-depth", "3"])
    assert both.exit_code == 2 and "drop --agent-depth" in both.output
    alone = CliRunner().invoke(cli_app, [*nowhere, "--agent-trace", str(path)])
    assert alone.exit_code == 2 and "--agents" in alone.output
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_a_run_of_agents_replays_the_trace_task_by_task(tmp_path: Path) -> None:
    text, expected = generated_trace(seed=9, tasks=3)
    path = tmp_path / "trace.jsonl"
    path.write_text(text)
    with start_server_in_thread(builtin_profile("deterministic"), time_scale=20.0) as sim:
        result = CliRunner().invoke(cli_app, [
            "run", "--base-url", sim.base_url, "--agents", "2", "--agent-trace", str(path),
            "--think-time", "fixed:0.01", "--duration", "0.5", "--output-tokens", "4",
            "--out", str(tmp_path / "out"), "--server-metrics", "off",
        ])
    assert result.exit_code == 0, result.output
    (run_dir,) = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    # the agents' calls (the run's first request checks the server, outside any task)
    records = [r for r in iter_records(run_dir / REQUESTS_FILE)
               if r.ok and r.user is not None and r.conversation is not None]
    assert {r.user for r in records} == {0, 1}
    for record in records:
        assert record.user is not None and record.conversation is not None
        shape = expected[(record.user + record.conversation * 2) % 3]
        assert record.depth == len(shape.latencies)
        assert record.turn is not None
        if record.turn <= len(shape.latencies):
            assert record.tool_wait_s == pytest.approx(shape.latencies[record.turn - 1])
        # the recorded answer length (0: the run's 4) and the recorded first prompt
        assert record.max_tokens_sent == (shape.output_tokens[record.turn - 1] or 4)
        assert record.output_tokens == record.max_tokens_sent  # the simulator answers in full
        if record.turn == 1:
            assert record.prompt_tokens == PREFIX + PROMPT
