"""`servecap run`'s agents flags: `--agents` and what shapes the agents' tasks (their rules:
`api.run.agent_settings`)."""

from __future__ import annotations

from typing import Annotated

import typer

from servecap.api.run.agent_settings import AGENT_DEFAULTS, AgentSettings

AgentsOption = Annotated[
    str | None,
    typer.Option(help="Agents: virtual agents per level, e.g. 4,8,16 (tasks of model calls "
                      "with tool calls between them; --think-time is the idle time between "
                      f"tasks, default {AGENT_DEFAULTS.idle})"),
]
AgentDepthOption = Annotated[
    str, typer.Option(help="Agents: tool calls per task (then a final answer): N, "
                           "uniform:LO:HI, normal:MEAN:SD or lognormal:MEDIAN:SIGMA")
]
ToolLatencyOption = Annotated[
    str, typer.Option(help="Agents: seconds a tool call takes: exp:MEAN, fixed:S, "
                           "lognormal:MEDIAN:SIGMA or uniform:LO:HI")
]
ToolResultTokensOption = Annotated[
    str, typer.Option(help="Agents: tokens of a tool's result, appended to the context: N, "
                           "uniform:LO:HI, normal:MEAN:SD or lognormal:MEDIAN:SIGMA")
]
ToolsOption = Annotated[
    str | None,
    typer.Option(help="Agents: a JSON file, the list of OpenAI tools every call sends "
                      "(default: a built-in catalogue of 4)"),
]

ContextBudgetOption = Annotated[
    str | None,
    typer.Option(help="Agents: compact a task's context once it passes TOKENS, with one "
                      "extra call that leaves a summary of SUMMARY tokens (TOKENS[:SUMMARY], "
                      "default a tenth of TOKENS)"),
]

FanOutOption = Annotated[
    str | None,
    typer.Option(help="Agents: sub-agents a task's first call spawns, each a chain of its "
                      "own, run at once, their answers joining the task's context: N, "
                      "uniform:LO:HI, normal:MEAN:SD or lognormal:MEDIAN:SIGMA"),
]


AgentTraceOption = Annotated[
    str | None,
    typer.Option(help="Agents: a JSONL trace of recorded tasks (task_id, call_index, "
                      "newly_append_tokens, output_tokens, tools[].tool_wall_latency_ms) "
                      "whose depth, tool latencies and result sizes the agents replay"),
]


def agent_settings(
    agents: str | None, depth: str, tool_latency: str, tool_result_tokens: str,
    tools: str | None, context_budget: str | None, fan_out: str | None,
    agent_trace: str | None = None,
) -> AgentSettings:
    """The flags as the api's settings."""
    return AgentSettings(agents, depth, tool_latency, tool_result_tokens, tools,
                         context_budget, fan_out, agent_trace)


__all__ = ["AGENT_DEFAULTS", "agent_settings"]
