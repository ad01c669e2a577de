"""Agents' tasks, sans-I/O: seeded draws, the context a task grows, the tool-call turns and
catalogue, and the settings' errors."""

from __future__ import annotations

import json

import pytest

from servecap.core.errors import SettingError
from servecap.workload.agents import AgentDraws, TaskContext
from servecap.workload.tools import (
    ToolCall,
    ToolCallLog,
    ToolTurn,
    default_tools,
    names_of,
    parse_tools,
    split_text,
    turn_json,
)


def draws(seed: int = 0, depth: str = "uniform:1:5") -> AgentDraws:
    return AgentDraws.parse(depth, "exp:2", "lognormal:300:0.5", "exp:10", seed)


def test_a_task_draws_the_same_in_any_order_and_process() -> None:
    a, b = draws(), draws()
    later_first = [b.task(3, 1), b.task(0, 0)]
    assert [a.task(0, 0), a.task(3, 1)] == later_first[::-1]
    assert a.task(0, 0) != a.task(0, 1) and a.task(0, 0) != draws(seed=1).task(0, 0)
    assert a.start_offset_s(2) == b.start_offset_s(2)


def test_a_task_draws_one_latency_and_result_per_tool_call() -> None:
    tasks = [draws().task(agent, 0) for agent in range(200)]
    assert {t.depth for t in tasks} == {1, 2, 3, 4, 5}
    for task in tasks:
        assert len(task.tool_latency_s) == len(task.tool_result_tokens) == task.depth
        assert all(n >= 1 for n in task.tool_result_tokens) and task.idle_s >= 0


@pytest.mark.parametrize(
    ("field", "spec", "setting"),
    [
        ("depth", "0", "agent_depth"),
        ("depth", "deep", "agent_depth"),
        ("depth", "uniform:5:2", "agent_depth"),
        ("depth", "trace:x.csv", "agent_depth"),
        ("tool_result", "-3", "tool_result_tokens"),
        ("tool_latency", "exp:-1", "tool_latency"),
    ],
)
def test_a_bad_spec_names_its_setting(field: str, spec: str, setting: str) -> None:
    specs = {"depth": "2", "tool_latency": "exp:1", "tool_result": "100", "idle": "exp:1",
             field: spec}
    with pytest.raises(SettingError) as caught:
        AgentDraws.parse(specs["depth"], specs["tool_latency"], specs["tool_result"],
                         specs["idle"], 0)
    assert caught.value.settings == (setting,)
    assert "--" not in str(caught.value)  # no flag below the front ends


def test_the_context_grows_by_the_turns_and_the_exact_result_size() -> None:
    context = TaskContext("start", (0, 1, 2))
    calls = context.after_tool_call("", (ToolCall("c1", "search", '{"q":"x"}'),), 1, 25, [])
    assert calls[0].id == "c1"
    assistant, tool = context.turns[1:]
    assert isinstance(assistant, ToolTurn) and assistant.tool_calls == calls
    assert isinstance(tool, ToolTurn) and tool.tool_call_id == "c1" and len(tool.content) == 100
    # the server answered in text: the agent makes the call, naming a catalogue tool
    made = context.after_tool_call("text", (), 2, 10, ["read_file", "search"])
    assert made[0].name == "search" and made[0].arguments == "{}"
    assert len(context.messages()) == 5 and context.messages()[3].content == "text"
    # the same task's results are the same text; another task's differ
    again = TaskContext("start", (0, 1, 2))
    again.after_tool_call("", calls, 1, 25, [])
    assert again.turns[2] == tool
    other = TaskContext("start", (0, 1, 3))
    other.after_tool_call("", calls, 1, 25, [])
    assert other.turns[2] != tool


def test_several_calls_share_the_result_size() -> None:
    context = TaskContext("s", (0, 0, 0))
    calls = (ToolCall("a", "f", "{}"), ToolCall("b", "g", "{}"), ToolCall("c", "h", "{}"))
    context.after_tool_call("", calls, 1, 10, [])
    results = context.turns[2:]
    assert [t.tool_call_id for t in results] == ["a", "b", "c"]  # type: ignore[union-attr]
    assert sum(len(t.content) for t in results) == 40
    assert split_text("abcdefg", 3) == ["abc", "de", "fg"]


def test_turns_on_the_wire() -> None:
    call = ToolCall("c", "search", "{}")
    assert turn_json(ToolTurn("assistant", "", (call,))) == {
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "c", "type": "function",
                        "function": {"name": "search", "arguments": "{}"}}],
    }
    assert turn_json(ToolTurn("tool", "out", tool_call_id="c")) == {
        "role": "tool", "content": "out", "tool_call_id": "c"}


def test_the_log_joins_streamed_pieces_by_index() -> None:
    log = ToolCallLog()
    log.add([{"index": 0, "id": "x", "function": {"name": "se", "arguments": '{"q"'}}])
    log.add([{"index": 1, "id": "y", "function": {"name": "f", "arguments": "{}"}}])
    log.add([{"index": 0, "function": {"name": "arch", "arguments": ':"a"}'}}])
    log.add("garbage")
    log.add([None, {"index": "bad"}])
    assert log.calls()[:2] == (ToolCall("x", "search", '{"q":"a"}'), ToolCall("y", "f", "{}"))


def test_a_catalogue_is_a_json_list_of_function_tools() -> None:
    tools = default_tools()
    assert parse_tools(json.dumps(list(tools)), "t.json") == tools
    assert names_of(tools)[0] == "read_file"
    for text in ("{", "{}", "[]", '[{"type": "function"}]', '[{"name": "x"}]'):
        with pytest.raises(SettingError) as caught:
            parse_tools(text, "t.json")
        assert caught.value.settings == ("tools",) and "t.json" in str(caught.value)


def test_sub_agents_draw_chains_of_their_own_and_join_as_one_result() -> None:
    fanned = AgentDraws.parse("uniform:1:5", "exp:2", "100", "exp:1", 0, "uniform:2:4")
    tasks = [fanned.task(agent, 0) for agent in range(100)]
    assert {t.fan_out for t in tasks} == {2, 3, 4}
    assert draws().task(0, 0).fan_out == 0  # no fan-out without its spec
    sub = fanned.sub_task(0, 0, 1)
    assert sub.fan_out == 0 and sub == fanned.sub_task(0, 0, 1) != fanned.sub_task(0, 0, 2)
    context = TaskContext("s", (0, 0, 0))
    context.after_spawn("", (ToolCall("c", "spawn_agents", "{}"),), [10, 5])
    spawned, result = context.turns[1:]
    assert isinstance(spawned, ToolTurn) and spawned.tool_calls[0].name == "spawn_agents"
    assert isinstance(result, ToolTurn) and result.tool_call_id == "c"
    assert len(result.content) == 4 * 15 and "Sub-agent 2 answered" in result.content
    assert len(TaskContext.of_length(30, (1,)).turns[0].content) == 120
