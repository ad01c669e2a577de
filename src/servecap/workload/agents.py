"""Virtual agents' tasks, sans-I/O: what each task draws and the context it grows.

A task is a chain of model calls. It draws its depth D (the tool calls it makes: calls 1..D
each end with a tool call, call D + 1 is the final answer), a tool latency and a tool
result size for each of its D tool calls, and the idle time after it. Every draw comes from
`random.Random((seed, agent, task))`, so a task is the same in any process and whatever
order the agents run in (a worker process runs its part of the agents).

`TaskContext` holds one task's conversation: it opens with the task's prompt, and after
each tool call it appends the assistant turn (the server's own tool calls, or one the
agent makes where the server answered in text) and one `tool` turn per call holding the
tool result: exactly `tokens * CHARS_PER_TOKEN` characters split over the calls, so the
context grows by the call's output plus the drawn result.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

import numpy as np

from servecap.workload.agent_trace import TraceTask
from servecap.workload.datasets import Message
from servecap.workload.lengths import LengthDist, parse_count_spec
from servecap.workload.prompts import CHARS_PER_TOKEN
from servecap.workload.text import fit
from servecap.workload.think_time import ThinkTime, parse_think_time
from servecap.workload.tools import ToolCall, ToolTurn, split_text


@dataclass(frozen=True, slots=True)
class TaskDraw:
    """What one task drew: its depth, each tool call's latency (s) and result size
    (tokens), and the idle time (s) after the task."""

    depth: int
    tool_latency_s: tuple[float, ...]
    tool_result_tokens: tuple[int, ...]
    idle_s: float
    fan_out: int = 0  # sub-agents the task's first call spawns
    # a replayed trace's lengths (0: the run's): the first prompt's, each call's answer's
    prompt_tokens: int = 0
    output_tokens: tuple[int, ...] = ()

    def max_tokens(self, call: int, default: int) -> int:
        """Call `call`'s (from 1) answer length: the trace's, else `default`."""
        recorded = self.output_tokens[call - 1] if call <= len(self.output_tokens) else 0
        return recorded or default


@dataclass(frozen=True, slots=True)
class AgentDraws:
    """The distributions a level's tasks draw from (parsed once per level)."""

    depth: LengthDist
    tool_latency: ThinkTime
    tool_result: LengthDist
    idle: ThinkTime
    seed: int
    fan_out: LengthDist | None = None
    # a replayed trace (`workload.agent_trace`): its tasks' shapes instead of the draws
    trace: tuple[TraceTask, ...] = ()
    agents: int = 1  # the level's agents: which trace task an agent's task replays

    @classmethod
    def parse(
        cls, depth: str, tool_latency: str, tool_result: str, idle: str, seed: int,
        fan_out: str | None = None,
    ) -> AgentDraws:
        """The specs as given; a bad one raises a `SettingError` naming its setting."""
        return cls(
            depth=parse_count_spec(depth, "agent_depth"),
            tool_latency=parse_think_time(tool_latency, "tool_latency"),
            tool_result=parse_count_spec(tool_result, "tool_result_tokens"),
            idle=parse_think_time(idle, "think_time"),
            seed=seed,
            fan_out=None if fan_out is None else parse_count_spec(fan_out, "fan_out"),
        )

    def task(self, agent: int, task: int) -> TaskDraw:
        """Task `task` (from 0) of agent `agent`: the same draws in every process; with a
        trace, the depth, tool latencies, result sizes and lengths of its task
        (a + t x N) mod T."""
        draw = self._draw(f"{self.seed}:{agent}:{task}", self.fan_out)
        if not self.trace:
            return draw
        shape = self.trace[(agent + task * self.agents) % len(self.trace)]
        return replace(draw, depth=len(shape.latencies), tool_latency_s=shape.latencies,
                       tool_result_tokens=shape.sizes, prompt_tokens=shape.prompt_tokens,
                       output_tokens=shape.output_tokens)

    def sub_task(self, agent: int, task: int, sub_agent: int) -> TaskDraw:
        """The chain of sub-agent `sub_agent` (from 1) of a task: no fan-out of its own."""
        return self._draw(f"{self.seed}:{agent}:{task}:sub{sub_agent}", None)

    def _draw(self, seed: str, fan_out: LengthDist | None) -> TaskDraw:
        rng = random.Random(seed)
        # the lengths draw from numpy: seeded from the same task's own stream
        np_rng = np.random.default_rng(rng.getrandbits(64))
        depth = int(self.depth.sample(1, np_rng)[0])
        sizes = tuple(int(n) for n in self.tool_result.sample(depth, np_rng))
        latencies = tuple(self.tool_latency.sample(rng) for _ in range(depth))
        idle = self.idle.sample(rng)
        spawned = 0 if fan_out is None else int(fan_out.sample(1, np_rng)[0])
        return TaskDraw(depth, latencies, sizes, idle, spawned)

    def start_offset_s(self, agent: int) -> float:
        """When agent `agent` starts its first task: the idle time's residual, as a steady
        population of agents would be caught (`ThinkTime.sample_residual`)."""
        return self.idle.sample_residual(random.Random(f"{self.seed}:{agent}:start"))


# The instruction a compaction call appends (`TaskContext.compaction_request`), in tokens.
COMPACTION_REQUEST_TOKENS = 16


class TaskContext:
    """One task's conversation as it grows (and, past a budget, is compacted)."""

    def __init__(self, prompt: str, key: tuple[object, ...]) -> None:
        self.turns: list[Message | ToolTurn] = [Message("user", prompt)]
        self._key = key  # seeds the tool results' text

    def after_tool_call(
        self, answer: str, calls: tuple[ToolCall, ...], call: int, result_tokens: int,
        tool_names: list[str],
    ) -> tuple[ToolCall, ...]:
        """Append call `call`'s assistant turn and its tool results of `result_tokens` in
        all; where the server made no tool call, the agent makes one (a tool of the
        catalogue, empty arguments) so the conversation stays a valid tool exchange.
        Returns the calls answered."""
        if not calls:
            name = tool_names[(call - 1) % len(tool_names)] if tool_names else "tool"
            calls = (ToolCall(f"call_{'_'.join(map(str, self._key))}_{call}", name, "{}"),)
        self.turns.append(ToolTurn("assistant", answer, calls))
        text = fit(f"Result of {calls[0].name}: ", result_tokens * CHARS_PER_TOKEN,
                   ("tool", *self._key, call))
        for tool_call, part in zip(calls, split_text(text, len(calls)), strict=True):
            self.turns.append(ToolTurn("tool", part, tool_call_id=tool_call.id))
        return calls

    def after_spawn(self, answer: str, calls: tuple[ToolCall, ...], sizes: list[int]) -> None:
        """Append the assistant turn that spawned sub-agents and, as its result, their
        answers: `sizes[j]` tokens each, joined (split over the calls where it made
        several)."""
        self.turns.append(ToolTurn("assistant", answer, calls))
        text = "".join(
            fit(f"Sub-agent {j} answered: ", tokens * CHARS_PER_TOKEN,
                ("answer", *self._key, j))
            for j, tokens in enumerate(sizes, start=1)
        )
        for tool_call, part in zip(calls, split_text(text, len(calls)), strict=True):
            self.turns.append(ToolTurn("tool", part, tool_call_id=tool_call.id))

    @classmethod
    def of_length(cls, tokens: int, key: tuple[object, ...]) -> TaskContext:
        """A context opening with a prompt of exactly `tokens` (a sub-agent's own task, a
        replayed task's recorded prompt)."""
        return cls(fit("Sub-task: ", tokens * CHARS_PER_TOKEN, ("prompt", *key)), key)

    def messages(self) -> tuple[Message | ToolTurn, ...]:
        return tuple(self.turns)

    def compaction_request(self, call: int) -> Message:
        """The user turn that asks for the summary (`COMPACTION_REQUEST_TOKENS` long)."""
        return Message("user", fit("Summarise the task so far for your next step. ",
                                   COMPACTION_REQUEST_TOKENS * CHARS_PER_TOKEN,
                                   ("compact", *self._key, call)))

    def compact(self, summary_tokens: int, call: int) -> None:
        """Replace the history with a summary of exactly `summary_tokens`."""
        self.turns = [Message("user", fit("Summary of the work so far: ",
                                          summary_tokens * CHARS_PER_TOKEN,
                                          ("summary", *self._key, call)))]
