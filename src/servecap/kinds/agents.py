"""Agents: N virtual agents, each running tasks that chain model calls with tool calls.

A task (`workload.agents`) draws its depth D, a tool latency and a tool result size per
tool call, and an idle time. Its calls each send the whole conversation so far with the
tool catalogue (`tools`); calls 1..D end with a tool call (the server's own `tool_calls`
when it made them, else one the agent makes: the drawn depth says a tool is called), so
the agent waits the tool's latency, appends the assistant turn and the tool result, and
calls again; call D + 1 is the final answer (sent with `tool_choice: "none"`). Then the
agent idles for the drawn time and starts its next task. A failed call ends its task.

With a context budget, a call whose context (as the agent built it) would pass the budget is
preceded by one extra call that compacts it, as coding agents do: the conversation plus an
instruction to summarise, answered in `summary_tokens`; the history is then the summary
alone, of exactly that length (the agent's own text: so the context's size stays known). Its
record is marked `compaction` and carries the index of the call it precedes.

Agents start as a steady population would be caught (each after a draw of the idle time's
residual); calls sent in the first `ramp_s` are the level's warm-up (recorded, marked,
left out of its statistics). No task starts after the level's duration; tasks in flight
then finish (so every task the level counts is whole) and are recorded; a stop (Ctrl-C, a
capacity probe's rule) ends them between calls. Each record carries the agent (`user`), its task
(`conversation`), the call's index (`turn`), the task's depth, whether and why the call
ended in a tool call, the tool wait after it and the tokens appended before it; the server's
usage gives the context (`prompt_tokens`) and what its prefix cache served.

Over worker processes every worker draws the same tasks and runs agent a if
a % N == k (`Share.part`). The level's own summary is `kinds.agents_summary`'s.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from servecap.core.clock import now_ns
from servecap.core.config import SLO, parse_levels
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary
from servecap.kinds.agents_summary import agent_fields, agent_series, agent_tables
from servecap.kinds.base import (
    KindSeries,
    KindTable,
    KindText,
    LevelSpec,
    LoadKind,
    LoadPlan,
    Share,
)
from servecap.kinds.io import LevelIO, in_task_group
from servecap.workload.agents import (
    COMPACTION_REQUEST_TOKENS,
    AgentDraws,
    TaskContext,
    TaskDraw,
)
from servecap.workload.datasets import Message
from servecap.workload.source import IndexedSource, Request, RequestSource
from servecap.workload.tools import ToolCallLog, ToolTurn, default_tools, names_of

NS_PER_S = 1_000_000_000
# Each task's prompt is a request of the run's source from a stretch of its own (as the
# sessions' turns are), so a level's tasks open with prompts no earlier level sent.
AGENTS_FIRST_REQUEST = 1 << 40
LEVEL_STRETCH = 1 << 26


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
    ramp_s: float
    duration_s: float
    seed: int

    WIRE = "AgentsLevel"

    def demand(self) -> int:
        return self.agents

    def split(self, workers: int, source: RequestSource | None = None) -> list[Share]:
        return [Share(k, self, part=(k, workers)) for k in range(min(workers, self.agents))]

    async def run(self, io: LevelIO) -> None:
        await run_agents_level(self, io)


@dataclass(slots=True)
class _Clock:
    """The level's times: when measuring starts and when sending ends."""

    t0: int
    steady_from: int
    end: int

    @property
    def over(self) -> bool:
        return now_ns() >= self.end


async def _wait(seconds: float, until_ns: int) -> None:
    """A plain sleep, cut at the level's end: a tool's latency or an agent's idle time needs
    no sub-millisecond precision."""
    await asyncio.sleep(max(0, min(until_ns, now_ns() + round(seconds * NS_PER_S)) - now_ns())
                        / NS_PER_S)


def _text(history: tuple[Message | ToolTurn, ...]) -> str:
    """The context as one text: what the client estimates prompt tokens by without usage."""
    return "".join(turn.content for turn in history)


@dataclass(slots=True)
class _TaskState:
    """One task as it runs: its draws, its context and what the agent knows of its size."""

    task: int
    draw: TaskDraw
    max_tokens: int
    built: int  # the context as the agent built it, in tokens
    context: TaskContext
    appended: int | None = None  # tokens added since the previous call (None: first call)

    def grow(self, tokens: int) -> None:
        self.appended = (self.appended or 0) + tokens
        self.built += tokens


class _Agent:
    """One agent of a level: runs its tasks in turn."""

    def __init__(self, level: AgentsLevel, io: LevelIO, draws: AgentDraws, agent: int) -> None:
        self.level, self.io, self.draws, self.agent = level, io, draws, agent
        self.tools = tuple(json.loads(level.tools_json))
        self.tool_names = names_of(self.tools)
        source = io.source
        if not isinstance(source, IndexedSource):
            raise TypeError("agents need a source with request(i)")
        self.source = source

    async def run(self, clock: _Clock) -> None:
        await _wait(self.draws.start_offset_s(self.agent), clock.end)
        task = 0
        idle_before: float | None = None
        while not self.io.stopped and not clock.over:
            draw = self.draws.task(self.agent, task)
            await self._task(clock, task, draw, idle_before)
            await _wait(draw.idle_s, clock.end)
            task, idle_before = task + 1, draw.idle_s

    async def _task(
        self, clock: _Clock, task: int, draw: TaskDraw, idle_before: float | None
    ) -> None:
        index = AGENTS_FIRST_REQUEST + self.level.agents * LEVEL_STRETCH
        first = self.source.request(index + self.agent + task * self.level.agents)
        state = _TaskState(task, draw, first.max_tokens, first.input_tokens,
                           TaskContext(first.text, (self.level.seed, self.agent, task)))
        for call in range(1, draw.depth + 2):
            if self.io.stopped:
                return
            budget = self.level.context_budget
            if budget is not None and state.built > budget and not await self._compact(
                clock, state, call
            ):
                return
            final = call == draw.depth + 1
            record = self._record(clock, state, call)
            record.think_before_s = idle_before if call == 1 else None
            answer: list[str] = []
            log = ToolCallLog()
            history = state.context.messages()
            request = Request(
                _text(history), state.max_tokens, state.built, history=history,
                answer=answer, tools=self.tools, tool_choice="none" if final else "auto",
                tool_log=log,
            )
            await self._send(request, record, final, draw, call)
            if not record.ok or final:
                return
            state.context.after_tool_call("".join(answer), log.calls(), call,
                                          draw.tool_result_tokens[call - 1], self.tool_names)
            state.grow(record.output_tokens + draw.tool_result_tokens[call - 1])
            await asyncio.sleep(draw.tool_latency_s[call - 1])  # the tool, however late

    async def _compact(self, clock: _Clock, state: _TaskState, call: int) -> bool:
        """The extra call that compacts the context past the budget: the conversation plus
        the instruction to summarise, answered in `summary_tokens`; then the history is
        the summary alone (`TaskContext.compact`). Returns whether the call succeeded."""
        instruction = state.context.compaction_request(call)
        state.grow(COMPACTION_REQUEST_TOKENS)
        record = self._record(clock, state, call)
        record.compaction = True
        history = (*state.context.messages(), instruction)
        request = Request(_text(history), self.level.summary_tokens, state.built,
                          history=history, tools=self.tools, tool_choice="none")
        await self._send(request, record, True, None, call)
        if record.ok:
            state.context.compact(self.level.summary_tokens, call)
            state.built = self.level.summary_tokens
        return record.ok

    def _record(self, clock: _Clock, state: _TaskState, call: int) -> RequestRecord:
        record = RequestRecord.for_level(
            self.level.key, next(self.io.ids), self.agent, now_ns(),
            warmup=self.level.warmup or now_ns() < clock.steady_from,
        )
        record.user, record.conversation, record.turn = self.agent, state.task, call
        record.depth = state.draw.depth
        record.appended_tokens, state.appended = state.appended, None  # counted once
        return record

    async def _send(
        self, request: Request, record: RequestRecord, final: bool, draw: TaskDraw | None,
        call: int,
    ) -> None:
        """Send one call; the record is sunk however it ends, with what followed it (no
        `draw`: a compaction, followed by the call it precedes)."""
        record.input_tokens_sent = request.input_tokens
        record.max_tokens_sent = request.max_tokens
        try:
            await self.io.backend.send(request, record)
            if draw is None:
                pass
            elif record.ok and final:
                record.think_after_s = draw.idle_s
            elif record.ok:
                assert request.tool_log is not None
                record.tool_call = "server" if request.tool_log.calls() else "drawn"
                record.tool_wait_s = draw.tool_latency_s[call - 1]
        finally:
            self.io.sink(record)


async def run_agents_level(level: AgentsLevel, io: LevelIO) -> None:
    """Run every agent of the level until the warm-up plus the duration has passed."""
    draws = AgentDraws.parse(level.depth, level.tool_latency, level.tool_result_tokens,
                             level.idle, level.seed)
    t0 = now_ns()
    steady_from = t0 + round(level.ramp_s * NS_PER_S)
    clock = _Clock(t0, steady_from, steady_from + round(level.duration_s * NS_PER_S))

    async def start(group: asyncio.TaskGroup) -> None:
        for agent in range(level.agents):
            if io.runs_user(agent):  # a worker process runs its part of the agents
                group.create_task(_Agent(level, io, draws, agent).run(clock))

    await in_task_group(start)


class AgentsLoad(LoadPlan):
    """Levels of virtual agents (`agents=8`): each runs tasks of model calls with tool
    calls between them, and idles between tasks. Specs are kept as text; the front end
    checks they parse (`AgentDraws.parse`)."""

    kind: Literal["agents"] = "agents"
    agents: list[int] = Field(min_length=1)
    depth: str = "uniform:2:6"
    tool_latency: str = "exp:1"
    tool_result_tokens: str = "lognormal:400:0.8"
    idle: str = "exp:10"
    tools: list[dict[str, Any]] = Field(default_factory=lambda: list(default_tools()))
    context_budget: int | None = Field(default=None, gt=0)
    summary_tokens: int | None = Field(default=None, gt=0)  # None: a tenth of the budget
    ramp_s: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    duration_s: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    seed: int = 0

    @field_validator("agents")
    @classmethod
    def _check_agents(cls, value: list[int]) -> list[int]:
        if min(value) < 1:
            raise ValueError("agent counts are integers >= 1")
        return value

    @model_validator(mode="after")
    def _check_summary(self) -> AgentsLoad:
        if self.context_budget is not None and self.summary() >= self.context_budget:
            raise ValueError(f"the summary ({self.summary()} tokens) must be shorter "
                             f"than the context budget ({self.context_budget})")
        return self

    def summary(self) -> int:
        """The tokens a compaction leaves: as set, else a tenth of the budget."""
        if self.summary_tokens is not None:
            return self.summary_tokens
        return max(1, (self.context_budget or 0) // 10)

    def levels(self) -> list[AgentsLevel]:
        tools = json.dumps(self.tools, separators=(",", ":"))
        return [
            AgentsLevel(
                key=KIND.key(n), n_requests=n, agents=n, depth=self.depth,
                tool_latency=self.tool_latency, tool_result_tokens=self.tool_result_tokens,
                idle=self.idle, tools_json=tools, context_budget=self.context_budget,
                summary_tokens=self.summary(), ramp_s=self.ramp_s,
                duration_s=self.duration_s, seed=self.seed,
            )
            for n in sorted(set(self.agents))
        ]

    def max_in_flight(self) -> int:
        return max(self.agents)

    @classmethod
    def from_text(cls, spec: str, seed: int) -> AgentsLoad:
        return cls(agents=parse_levels(spec, "load"), seed=seed)

    def worker_source(self, source: RequestSource, worker: int, workers: int) -> RequestSource:
        """Every worker draws the same tasks and runs its own part of the agents."""
        return source


class AgentsKind(LoadKind):
    def summary_fields(self, key: LevelKey, records: list[RequestRecord]) -> dict[str, Any]:
        return {"kind_block": agent_fields(records, int(key.value))}

    def tables(self, level: LevelSummary, slo: SLO) -> list[KindTable]:
        return agent_tables(level.kind_block or {})

    def series(self, level: LevelSummary) -> list[KindSeries]:
        return agent_series(f"agents-{level.key.value}", level.kind_block or {})


KIND = AgentsKind(
    "agents",
    KindText(
        prefix="agents",
        unit="",
        quantity="agents",
        axis_title="virtual agents (N)",
        mode="agents",
        methodology=(
            "agents: N virtual agents, each runs tasks of model calls that carry the growing "
            "context and a tool catalogue, waits a drawn tool latency after each tool call, "
            "and idles between tasks"
        ),
        example="agents=4,8,16",
    ),
    AgentsLoad,
    [AgentsLevel],
)
