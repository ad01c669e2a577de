"""`servecap verify RUN`: run the users a sweep predicts against the same server."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from servecap.api.predict.verify import VerifyOptions, summary_line, verify
from servecap.api.predict.verify_agents import AgentsVerifyOptions
from servecap.cli import run_flags_agents as af
from servecap.cli.capacity_load_flags import TaskTimeSloOption
from servecap.cli.common import (
    SLO_DEFAULTS,
    StatChoice,
    StatOption,
    TpsSloOption,
    TtftSloOption,
    fail_input,
    slo_from_flags,
    user_errors,
)
from servecap.cli.run_cmd import RichProgress
from servecap.cli.run_flags_sessions import DEFAULTS as SESSIONS
from servecap.cli.verify_agents import (
    MaxAgentsOption,
    check_load,
    run_agents,
)
from servecap.stats.search import DEFAULT_BUDGET, DEFAULT_TOLERANCE


@user_errors
def verify_cmd(
    run: Annotated[Path, typer.Argument(help="A run directory holding a concurrency sweep")],
    stat: StatOption = StatChoice(SLO_DEFAULTS.statistic),
    ttft_slo_ms: TtftSloOption = SLO_DEFAULTS.ttft_ms,
    tps_slo: TpsSloOption = SLO_DEFAULTS.tps,
    think_time: Annotated[str, typer.Option(
        help="Users' think time: exp:MEAN, fixed:S, lognormal:MEDIAN:SIGMA, uniform:LO:HI "
        "(its mean is the Z of the prediction)")] = "exp:45",
    turns: Annotated[str, typer.Option(help="User turns per conversation")] = SESSIONS.turns,
    ramp_s: Annotated[float | None, typer.Option(
        help="Seconds of warm-up before each level's measured window (default: five "
        "of the sweep's response times at C_max, 1 to 60)")] = None,
    duration: Annotated[float, typer.Option(help="Measured seconds per level")] = (
        SESSIONS.duration_s
    ),
    search: Annotated[bool, typer.Option(
        "--search", help="Then find the largest N that passes (bracketing and bisection)")] = False,
    search_on_miss: Annotated[bool, typer.Option(
        "--search-on-miss", help="Search only when the predicted N misses (one level when it "
        "holds)")] = False,
    tolerance: Annotated[float, typer.Option(
        help="Search: stop when the bracket is within this fraction")] = DEFAULT_TOLERANCE,
    budget: Annotated[int, typer.Option(help="Search: most levels to measure")] = DEFAULT_BUDGET,
    out: Annotated[
        Path | None, typer.Option(help="Results directory (default: beside RUN)")
    ] = None,
    load: Annotated[str, typer.Option(
        help="users (virtual users in conversations) or agents (concurrent agents within "
        "--task-time-slo-s)")] = "users",
    task_time_slo_s: TaskTimeSloOption = None,
    max_agents: MaxAgentsOption = None,
    agent_depth: af.AgentDepthOption = af.AGENT_DEFAULTS.depth,
    tool_latency: af.ToolLatencyOption = af.AGENT_DEFAULTS.tool_latency,
    tool_result_tokens: af.ToolResultTokensOption = af.AGENT_DEFAULTS.tool_result_tokens,
    tools: af.ToolsOption = None,
    context_budget: af.ContextBudgetOption = None,
    fan_out: af.FanOutOption = None,
) -> None:
    """Predict users from a sweep (Little's law), run them, and report predicted vs verified.

    With --load agents: predict the concurrent agents within --task-time-slo-s from the
    sweep's C_max and a first level of C_max agents, run them, and search on a miss."""
    if not 0 < tolerance < 1:
        raise fail_input(f"invalid --tolerance {tolerance:g}: use a fraction between 0 and 1")
    if budget < 1:
        raise fail_input(f"invalid --budget {budget}: at least 1 level")
    if search and search_on_miss:
        raise fail_input("give --search (always) or --search-on-miss (when the predicted N "
                         "misses), not both")
    if duration <= 0 or (ramp_s is not None and ramp_s < 0):
        raise fail_input("--duration must be positive and --ramp-s non-negative")
    shape = af.agent_settings("1", agent_depth, tool_latency, tool_result_tokens, tools,
                              context_budget, fan_out)
    given = {"task_time_slo_s": task_time_slo_s, "max_agents": max_agents}
    if check_load(load, shape, given, turns) == "agents":
        slo = slo_from_flags(ttft_slo_ms, tps_slo, stat, 0.0,
                             task_time_slo_s or SLO_DEFAULTS.task_time_s)
        agents_options = AgentsVerifyOptions(
            slo=slo, search=search, tolerance=tolerance, budget=budget,
            out_dir=str(out) if out else None, **({"max_agents": max_agents} if max_agents
                                                  else {}))
        run_agents(run, shape, think_time, ramp_s, duration, agents_options)
        return
    options = VerifyOptions(
        statistic=stat.value, ttft_slo_ms=ttft_slo_ms, tps_slo=tps_slo, think=think_time,
        turns=turns, ramp_s=ramp_s, duration_s=duration, search=search,
        search_on_miss=search_on_miss, tolerance=tolerance, budget=budget,
        out_dir=str(out) if out else None,
    )
    console = Console(stderr=True)
    progress = RichProgress(console)
    try:
        result, outcome = verify(run, options, None, progress)
    finally:
        progress.stop()
    print(summary_line(result))
    print(f"verify run saved to {outcome.run_dir}")
