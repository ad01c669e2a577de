"""How one virtual agent runs its tasks: the chain of calls, compaction and sub-agents.

A chain is a task's calls, or one of its sub-agents'. Each call sends the chain's context
with the catalogue; calls 1..D end with a tool call, after which the agent waits the tool's
drawn latency and appends the assistant turn and the result; call D + 1 is the final answer.
Past the context budget an extra call compacts the context first. With fan-out, the task's
first call spawns its drawn number of sub-agents instead of calling a tool: each runs a
chain of its own (its own prompt, depth, latencies and result sizes, drawn from the same
distributions, seeded by its index), all at once; the parent waits for every one, and their
final answers (each exactly as many tokens as its server wrote) join its context as the
result of the call that spawned them (one call, as a dispatch tool's: the server's own, or
one the agent makes). A failed call ends its chain, and a failed sub-agent its task.

`AgentsLevel` (the kind's level, `kinds.agents`) lives here beside the scheduler it runs.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, replace

from servecap.core.clock import now_ns
from servecap.core.records import RequestRecord
from servecap.kinds.base import LevelSpec, Share
from servecap.kinds.io import LevelIO, in_task_group
from servecap.workload.agent_trace import tasks_of_json
from servecap.workload.agents import COMPACTION_REQUEST_TOKENS, AgentDraws, TaskContext, TaskDraw
from servecap.workload.datasets import Message
from servecap.workload.source import IndexedSource, Request, RequestSource
from servecap.workload.tools import ToolCall, ToolCallLog, ToolTurn, names_of

NS_PER_S = 1_000_000_000
# Each task's prompt is a request of the run's source from a stretch of its own (as the
# sessions' turns are), so a level's tasks open with prompts no earlier level sent.
AGENTS_FIRST_REQUEST = 1 << 40
LEVEL_STRETCH = 1 << 26


@dataclass(slots=True)
class Clock:
    """The level's times: when measuring starts and when sending ends."""

    steady_from: int
    end: int

    @property
    def over(self) -> bool:
        return now_ns() >= self.end


async def wait(seconds: float, until_ns: int) -> None:
    """A plain sleep, cut at `until_ns`: an agent's idle time needs no sub-millisecond
    precision."""
    await asyncio.sleep(max(0, min(until_ns, now_ns() + round(seconds * NS_PER_S)) - now_ns())
                        / NS_PER_S)


def _text(history: tuple[Message | ToolTurn, ...]) -> str:
    """The context as one text: what the client estimates prompt tokens by without usage."""
    return "".join(turn.content for turn in history)


@dataclass(slots=True)
class Chain:
    """One chain as it runs: its draws, its context and what the agent knows of its size."""

    task: int
    draw: TaskDraw
    max_tokens: int
    built: int  # the context as the agent built it, in tokens
    context: TaskContext
    sub_agent: int | None = None  # None: the task's own chain
    appended: int | None = None  # tokens added since the previous call (None: none yet)

    def grow(self, tokens: int) -> None:
        self.appended = (self.appended or 0) + tokens
        self.built += tokens


class Agent:
    """One agent of a level: runs its tasks in turn."""

    def __init__(self, level: AgentsLevel, io: LevelIO, draws: AgentDraws, agent: int) -> None:
        self.level, self.io, self.draws, self.agent = level, io, draws, agent
        self.tools = tuple(json.loads(level.tools_json))
        self.tool_names = names_of(self.tools)
        source = io.source
        if not isinstance(source, IndexedSource):
            raise TypeError("agents need a source with request(i)")
        self.source = source

    async def run(self, clock: Clock) -> None:
        await wait(self.draws.start_offset_s(self.agent), clock.end)
        task = 0
        idle_before: float | None = None
        while not self.io.stopped and not clock.over:
            draw = self.draws.task(self.agent, task)
            await self.chain(clock, self._chain_of(task, draw), idle_before)
            await wait(draw.idle_s, clock.end)
            task, idle_before = task + 1, draw.idle_s

    def _chain_of(self, task: int, draw: TaskDraw, sub_agent: int | None = None) -> Chain:
        index = AGENTS_FIRST_REQUEST + self.level.agents * LEVEL_STRETCH
        first = self.source.request(index + self.agent + task * self.level.agents)
        key = (self.level.seed, self.agent, task, *(() if sub_agent is None else (sub_agent,)))
        if draw.prompt_tokens:  # a replayed task's recorded prompt
            context = TaskContext.of_length(draw.prompt_tokens, key)
            return Chain(task, draw, first.max_tokens, draw.prompt_tokens, context, sub_agent)
        if sub_agent is None:
            context = TaskContext(first.text, key)
        else:  # a prompt of its own, as long as the task's
            context = TaskContext.of_length(first.input_tokens, key)
        return Chain(task, draw, first.max_tokens, first.input_tokens, context, sub_agent)

    async def chain(self, clock: Clock, chain: Chain, idle_before: float | None) -> int | None:
        """Run the chain's calls; its final answer's tokens, None where a call failed."""
        for call in range(1, chain.draw.depth + 2):
            if self.io.stopped:
                return None
            budget = self.level.context_budget
            if budget is not None and chain.built > budget and not await self._compact(
                clock, chain, call
            ):
                return None
            final = call == chain.draw.depth + 1
            spawn = call == 1 and not final and chain.draw.fan_out > 0
            record, answer, calls = await self._call(clock, chain, call, final, spawn,
                                                     idle_before if call == 1 else None)
            if not record.ok or final:
                return record.output_tokens if record.ok else None
            if spawn and not await self._spawn(clock, chain, answer, calls, record):
                return None
            if not spawn:
                result = chain.draw.tool_result_tokens[call - 1]
                chain.context.after_tool_call(answer, calls, call, result, self.tool_names)
                chain.grow(record.output_tokens + result)
                await asyncio.sleep(chain.draw.tool_latency_s[call - 1])  # however late
        return None

    async def _spawn(self, clock: Clock, chain: Chain, answer: str,
                     calls: tuple[ToolCall, ...], record: RequestRecord) -> bool:
        """Run the task's sub-agents at once and join their answers to its context, as the
        result of the call that spawned them (the server's own, else the agent's)."""
        subs = [self._chain_of(chain.task, self.draws.sub_task(self.agent, chain.task, j), j)
                for j in range(1, chain.draw.fan_out + 1)]
        results = await asyncio.gather(*(self.chain(clock, sub, None) for sub in subs))
        if any(tokens is None for tokens in results):
            return False
        sizes = [tokens or 0 for tokens in results]
        if not calls:
            key = "_".join(map(str, (self.level.seed, self.agent, chain.task)))
            calls = (ToolCall(f"call_{key}_spawn", "spawn_agents", "{}"),)
        chain.context.after_spawn(answer, calls, sizes)
        chain.grow(record.output_tokens + sum(sizes))
        return True

    async def _compact(self, clock: Clock, chain: Chain, call: int) -> bool:
        """The extra call that compacts the context past the budget: the conversation plus
        the instruction to summarise, answered in `summary_tokens`; then the history is
        the summary alone (`TaskContext.compact`). Returns whether the call succeeded."""
        instruction = chain.context.compaction_request(call)
        chain.grow(COMPACTION_REQUEST_TOKENS)
        record = self._record(clock, chain, call)
        record.compaction = True
        history = (*chain.context.messages(), instruction)
        request = Request(_text(history), self.level.summary_tokens, chain.built,
                          history=history, tools=self.tools, tool_choice="none")
        await self._send(request, record)
        if record.ok:
            chain.context.compact(self.level.summary_tokens, call)
            chain.built = self.level.summary_tokens
        return record.ok

    async def _call(
        self, clock: Clock, chain: Chain, call: int, final: bool, spawn: bool,
        idle_before: float | None,
    ) -> tuple[RequestRecord, str, tuple[ToolCall, ...]]:
        """One call of the chain: its record (sunk), its answer's text and tool calls."""
        record = self._record(clock, chain, call)
        record.think_before_s = idle_before
        answer: list[str] = []
        log = ToolCallLog()
        history = chain.context.messages()
        request = Request(
            _text(history), chain.draw.max_tokens(call, chain.max_tokens), chain.built,
            history=history, answer=answer,
            tools=self.tools, tool_choice="none" if final else "auto", tool_log=log,
        )
        after: dict[str, object] = {}
        if final and chain.sub_agent is None:
            after = {"think_after_s": chain.draw.idle_s}
        if spawn:
            after = {"tool_call": "spawn"}
        elif not final:
            after = {"tool_wait_s": chain.draw.tool_latency_s[call - 1]}
        await self._send(request, record, after, log)
        return record, "".join(answer), log.calls()

    def _record(self, clock: Clock, chain: Chain, call: int) -> RequestRecord:
        record = RequestRecord.for_level(
            self.level.key, next(self.io.ids), self.agent, now_ns(),
            warmup=self.level.warmup or now_ns() < clock.steady_from,
        )
        record.user, record.conversation, record.turn = self.agent, chain.task, call
        record.depth, record.sub_agent = chain.draw.depth, chain.sub_agent
        record.appended_tokens, chain.appended = chain.appended, None  # counted once
        return record

    async def _send(
        self, request: Request, record: RequestRecord, after: dict[str, object] | None = None,
        log: ToolCallLog | None = None,
    ) -> None:
        """Send one call; the record is sunk however it ends, with what followed it when
        it succeeded (`after`: the idle or tool wait drawn; who asked for the tool)."""
        record.input_tokens_sent = request.input_tokens
        record.max_tokens_sent = request.max_tokens
        try:
            await self.io.backend.send(request, record)
            if record.ok and after:
                for name, value in after.items():
                    setattr(record, name, value)
                if "tool_wait_s" in after:
                    record.tool_call = "server" if log is not None and log.calls() else "drawn"
        finally:
            self.io.sink(record)


async def run_agents_level(level: AgentsLevel, io: LevelIO) -> None:
    """Run every agent of the level until the warm-up plus the duration has passed."""
    draws = AgentDraws.parse(level.depth, level.tool_latency, level.tool_result_tokens,
                             level.idle, level.seed, level.fan_out)
    if level.trace_json:
        draws = replace(draws, trace=tasks_of_json(level.trace_json), agents=level.agents)
    steady_from = now_ns() + round(level.ramp_s * NS_PER_S)
    clock = Clock(steady_from, steady_from + round(level.duration_s * NS_PER_S))

    async def start(group: asyncio.TaskGroup) -> None:
        for agent in range(level.agents):
            if io.runs_user(agent):  # a worker process runs its part of the agents
                group.create_task(Agent(level, io, draws, agent).run(clock))

    await in_task_group(start)


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentsLevel(LevelSpec):
    """N agents running tasks for `ramp_s + duration_s` seconds (`n_requests`: a lower
    bound, each agent's first call)."""

    agents: int
    depth: str  # the specs, parsed by the scheduler (`AgentDraws.parse`)
    tool_latency: str
    tool_result_tokens: str
    idle: str
    tools_json: str  # the catalogue as JSON text: a level travels to workers as fields
    context_budget: int | None  # compact the context once it passes this many tokens
    summary_tokens: int  # the summary a compaction leaves
    fan_out: str | None  # sub-agents a task's first call spawns (a spec; None: none)
    ramp_s: float
    duration_s: float
    seed: int
    trace_json: str | None = None  # a replayed trace's task shapes (`workload.agent_trace`)

    WIRE = "AgentsLevel"

    def demand(self) -> int:
        return self.agents

    def split(self, workers: int, source: RequestSource | None = None) -> list[Share]:
        return [Share(k, self, part=(k, workers)) for k in range(min(workers, self.agents))]

    async def run(self, io: LevelIO) -> None:
        await run_agents_level(self, io)
