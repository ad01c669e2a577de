"""The agents' load settings and their rules (`load_settings` asks them for the load).

`agents` names the levels (virtual agents per level, `4,8,16`); `agent_depth` (tool calls
per task), `tool_latency` (seconds a tool takes), `tool_result_tokens` (a tool result's
size), `tools` (a JSON file: the catalogue every call sends) and `context_budget` (compact
the context past it: `TOKENS[:SUMMARY]`) and `fan_out` (sub-agents a task's first call
spawns) shape the tasks; the
think time between tasks, the ramp and the duration are the sessions' settings (a think
time left at the sessions' default takes the agents' own, `AgentsLoad.idle`). Every spec
is parsed here, before any load, so a bad one is one `SettingError` naming its setting.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from pydantic import ValidationError

from servecap.core.config import parse_levels
from servecap.core.errors import SettingError, bad_setting
from servecap.core.validation import setting_error
from servecap.kinds.agents import AgentsLoad
from servecap.kinds.sessions import SessionsLoad
from servecap.workload.agent_trace import parse_agent_trace, trace_json
from servecap.workload.agents import AgentDraws
from servecap.workload.files import read_text
from servecap.workload.tools import parse_tools

AGENT_DEFAULTS = AgentsLoad(agents=[1])  # the agents model's defaults
SESSIONS_THINK = SessionsLoad(users=[1]).think
# The model's fields by the settings that set them (their errors name the setting).
AGENT_SETTINGS = {"idle": "think_time", "duration_s": "duration", "ramp_s": "ramp_s",
                  "agents": "agents", "context_budget": "context_budget",
                  "summary_tokens": "context_budget"}


@dataclass(frozen=True)
class AgentSettings:
    """The agents' own settings as given (`agents` None: no agents)."""

    agents: str | None = None
    agent_depth: str = AGENT_DEFAULTS.depth
    tool_latency: str = AGENT_DEFAULTS.tool_latency
    tool_result_tokens: str = AGENT_DEFAULTS.tool_result_tokens
    tools: str | None = None  # a file
    context_budget: str | None = None  # TOKENS or TOKENS:SUMMARY
    fan_out: str | None = None  # sub-agents a task's first call spawns (a count spec)
    agent_trace: str | None = None  # a JSONL file of recorded tasks to replay the shapes of

    def shaping(self) -> dict[str, bool]:
        """Whether each setting that shapes the tasks was given (differs from its default)."""
        return {f.name: getattr(self, f.name) != f.default
                for f in fields(self) if f.name != "agents"}


AGENTS = AgentSettings()


def agents_load(
    settings: AgentSettings, endpoint: str, think_time: str, ramp_s: float,
    duration: float | None, seed: int,
) -> AgentsLoad | None:
    """The agents the settings ask for, None without `agents`; a bad setting raises a
    `SettingError` before any load."""
    if settings.agents is None:
        return None
    if endpoint != "chat":
        raise SettingError("{agents} send chat messages with tools: use {endpoint} chat",
                           "agents", "endpoint")
    if think_time == SESSIONS_THINK:
        think_time = AGENT_DEFAULTS.idle
    draws = AgentDraws.parse(settings.agent_depth, settings.tool_latency,
                             settings.tool_result_tokens, think_time, seed, settings.fan_out)
    extra: dict[str, Any] = {}
    if draws.fan_out is not None:
        extra["fan_out"] = draws.fan_out.spec
    if settings.context_budget is not None:
        extra["context_budget"], extra["summary_tokens"] = parse_budget(settings.context_budget)
    if settings.agent_trace is not None:
        extra["trace_json"] = _trace(settings)
    if settings.tools is not None:
        extra["tools"] = list(parse_tools(read_text(settings.tools, "tools file"),
                                          settings.tools))
    try:
        return AgentsLoad(
            agents=parse_levels(settings.agents, "agents"), depth=draws.depth.spec,
            tool_latency=str(draws.tool_latency),
            tool_result_tokens=draws.tool_result.spec, idle=str(draws.idle), ramp_s=ramp_s,
            duration_s=duration if duration is not None else AGENT_DEFAULTS.duration_s,
            seed=seed, **extra,
        )
    except ValidationError as exc:
        raise setting_error(exc, AGENT_SETTINGS) from exc


# what a replayed trace sets itself: a drawn spec beside it would do nothing
TRACE_SETS = ("agent_depth", "tool_latency", "tool_result_tokens")


def _trace(settings: AgentSettings) -> str:
    """The trace file's tasks as the level's JSON; a draw it replaces is refused."""
    assert settings.agent_trace is not None
    shaping = settings.shaping()
    given = next((name for name in TRACE_SETS if shaping[name]), None)
    if given is not None:
        raise SettingError(f"{{agent_trace}} replays each task's depth, tool latencies and "
                           f"result sizes: drop {{{given}}}", "agent_trace", given)
    text = read_text(settings.agent_trace, "agent trace")
    return trace_json(parse_agent_trace(text, settings.agent_trace))


def parse_budget(text: str) -> tuple[int, int | None]:
    """`TOKENS` or `TOKENS:SUMMARY`: the context budget and the summary a compaction leaves
    (None: a tenth of the budget), whole numbers > 0 with the summary below the budget."""
    parts = text.strip().split(":")
    numbers: list[int] = []
    for part in parts[:2]:
        try:
            numbers.append(int(part))
        except ValueError:
            numbers.append(0)
    if len(parts) > 2 or min(numbers) < 1:
        raise bad_setting("context_budget", f"{text.strip()!r}: expected TOKENS or "
                          "TOKENS:SUMMARY, whole numbers > 0", "invalid ")
    if len(numbers) == 2 and numbers[1] >= numbers[0]:
        raise bad_setting("context_budget", f"{text.strip()!r}: the SUMMARY must be shorter "
                          "than the budget", "invalid ")
    return numbers[0], numbers[1] if len(numbers) == 2 else None
