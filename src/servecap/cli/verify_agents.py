"""`servecap verify --load agents`: its flags' checks and its run (the users' are
`verify_cmd`'s)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from servecap.api.predict.verify_agents import (
    AgentsVerifyOptions,
    agents_summary_line,
    verify_agents,
)
from servecap.api.run.agent_settings import AgentSettings, agents_load
from servecap.cli.common import fail_input
from servecap.cli.run_cmd import RichProgress
from servecap.cli.run_flags_sessions import DEFAULTS as SESSIONS

MaxAgentsOption = Annotated[int | None, typer.Option(
    help="--load agents: the most agents a level runs "
    f"[default: {AgentsVerifyOptions.model_fields['max_agents'].default}]")]


def check_load(
    load: str, shape: AgentSettings, given: dict[str, float | None], turns: str,
) -> str:
    """The load to verify, refusing (exit 2) the other load's flags before any load."""
    if load not in ("users", "agents"):
        raise fail_input(f"invalid --load {load!r}: use users or agents")
    named = [name for name, value in given.items() if value is not None]
    named += [name for name, changed in shape.shaping().items() if changed]
    if load == "users" and named:
        raise fail_input(f"--{named[0].replace('_', '-')} applies only to --load agents")
    if load == "agents" and turns != SESSIONS.turns:
        raise fail_input("--turns applies only to --load users (an agent's task is its "
                         "chain of calls)")
    for name, value in given.items():
        if value is not None and not value > 0:
            raise fail_input(f"invalid --{name.replace('_', '-')} {value:g}: must be > 0")
    return load


def run_agents(
    run: Path, shape: AgentSettings, think_time: str, ramp_s: float | None, duration: float,
    options: AgentsVerifyOptions,
) -> None:
    """Check the task's shape, then predict, run and print (`api.predict.verify_agents`)."""
    task = agents_load(shape, "chat", think_time, ramp_s or 0.0, duration, 0)
    assert task is not None  # `shape` names its agents
    console = Console(stderr=True)
    progress = RichProgress(console)
    try:
        result, outcome = verify_agents(run, task, options, None, progress)
    finally:
        progress.stop()
    print(agents_summary_line(result))
    print(f"verify run saved to {outcome.run_dir}")
