"""Agents: N virtual agents, each running tasks that chain model calls with tool calls.

The scheduler is `kinds.agent_loop`. A task (`workload.agents`) draws its depth D, a tool
latency and a tool result size per tool call, and an idle time. Its calls each send the
whole conversation so far with the tool catalogue (`tools`); calls 1..D end with a tool
call (the server's own `tool_calls` when it made them, else one the agent makes: the drawn
depth says a tool is called), so the agent waits the tool's latency, appends the assistant
turn and the tool result, and calls again; call D + 1 is the final answer (sent with
`tool_choice: "none"`). Then the agent idles for the drawn time and starts its next task.
A failed call ends its task.

With a context budget, a call whose context (as the agent built it) would pass the budget is
preceded by one extra call that compacts it, as coding agents do: the conversation plus an
instruction to summarise, answered in `summary_tokens`; the history is then the summary
alone, of exactly that length (the agent's own text: so the context's size stays known). Its
record is marked `compaction` and carries the index of the call it precedes.

With fan-out, a task's first call spawns its drawn number of sub-agents instead of calling
a tool: each runs a chain of its own, all at once, and their final answers join the task's
context as the spawn calls' results. Their records carry `sub_agent` (from 1).

Agents start as a steady population would be caught (each after a draw of the idle time's
residual); calls sent in the first `ramp_s` are the level's warm-up (recorded, marked,
left out of its statistics). No task starts after the level's duration; tasks in flight
then finish (so every task the level counts is whole) and are recorded; a stop (Ctrl-C, a
capacity probe's rule) ends them between calls. Each record carries the agent (`user`), its
task (`conversation`), the call's index (`turn`), the task's depth, whether and why the call
ended in a tool call, the tool wait after it and the tokens appended before it; the server's
usage gives the context (`prompt_tokens`) and what its prefix cache served.

Over worker processes every worker draws the same tasks and runs agent a if
a % N == k (`Share.part`). The level's own summary is `kinds.agents_summary`'s.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from servecap.core.config import SLO, parse_levels
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary
from servecap.kinds.agent_loop import AgentsLevel
from servecap.kinds.agents_summary import agent_fields, agent_series, agent_tables
from servecap.kinds.agents_verdict import AGENTS_PREFIX, judge_level
from servecap.kinds.base import (
    KindSeries,
    KindTable,
    KindText,
    LoadKind,
    LoadPlan,
)
from servecap.workload.source import RequestSource
from servecap.workload.tools import default_tools


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
    fan_out: str | None = None
    summary_tokens: int | None = Field(default=None, gt=0)  # None: a tenth of the budget
    trace_json: str | None = None  # `--agent-trace`: the tasks' shapes replayed, as JSON
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
                summary_tokens=self.summary(), fan_out=self.fan_out, ramp_s=self.ramp_s,
                duration_s=self.duration_s, seed=self.seed, trace_json=self.trace_json,
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
    def judged_per_call(self) -> bool:
        return False  # on its tasks: `kinds.agents_verdict`

    def summary_fields(self, key: LevelKey, records: list[RequestRecord]) -> dict[str, Any]:
        return {"kind_block": agent_fields(records, int(key.value))}

    def tables(self, level: LevelSummary, slo: SLO) -> list[KindTable]:
        verdict = judge_level(level, slo)
        stat = slo.statistic.upper()
        text = "pass" if verdict.passed else f"fail ({verdict.reason})"
        return agent_tables(str(level.key), level.kind_block or {},
                            f"{text}: {stat} task time <= {slo.task_time_s:g} s, "
                            f"{stat} TTFT <= {slo.ttft_ms:g} ms")

    def series(self, level: LevelSummary) -> list[KindSeries]:
        return agent_series(str(level.key), f"agents-{level.key.value}", level.kind_block or {})


KIND = AgentsKind(
    "agents",
    KindText(
        prefix=AGENTS_PREFIX,
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
