"""`servecap capacity --load concurrency|rate|agents`: the load's flags, and which apply to
which.

A flag of the other load is refused before any load (exit 2) rather than ignored: with
`--load rate`, `--max-concurrency` would silently do nothing, and with `--load concurrency`
so would `--start-rate`. `--load agents` searches the concurrency boundary first, so
`--max-concurrency` applies to it too; its own options are checked by `agents_capacity`.
The defaults live in `CapacityOptions`; a flag not given is left out, so the model's default
applies and "given" stays visible here.
"""

from __future__ import annotations

from typing import Annotated

import typer

from servecap.api.capacity.capacity import CapacityOptions
from servecap.cli.common import fail_input

OPTIONS = CapacityOptions()
LoadOption = Annotated[str, typer.Option(
    help="concurrency (closed-loop streams), rate (open-loop Poisson arrivals, "
    "MLPerf's server scenario) or agents (concurrent agents within a task-time SLO)")]
TaskTimeSloOption = Annotated[float | None, typer.Option(
    "--task-time-slo-s", help="--load agents: the task time's statistic (--stat) must stay "
    f"within this many seconds [default: {OPTIONS.task_time_slo_s:g}]")]
MaxAgentsOption = Annotated[int | None, typer.Option(
    help=f"--load agents: the most agents the search probes [default: {OPTIONS.max_agents}]")]
AgentsDurationOption = Annotated[float | None, typer.Option(
    help="--load agents: seconds each agents level runs (tasks then started finish) "
    f"[default: {OPTIONS.agents_duration_s:g}]")]
StartRateOption = Annotated[float | None, typer.Option(
    help=f"--load rate: the first rate probed, requests/s [default: {OPTIONS.start_rate:g}]")]
RateResolutionOption = Annotated[float | None, typer.Option(
    help="--load rate: stop bisecting once the bracket is within this fraction of its "
    f"passing rate [default: {OPTIONS.rate_resolution:g}]")]
# the options that only one load reads
CONCURRENCY_ONLY = ("--max-concurrency",)
RATE_ONLY = ("--start-rate", "--rate-resolution")
# the users level's options, by parameter: `--load agents` runs no users level
USERS_ONLY = {"users_turns": "--users-turns", "users_duration": "--users-duration",
              "verify": "--verify/--no-verify"}


def refuse_users_options(load: str, ctx: typer.Context) -> None:
    """With `--load agents` the verified count is an agents level of the search: a users
    option typed on the command line would do nothing, so it is refused (exit 2)."""
    if load != "agents":
        return
    for name, flag in USERS_ONLY.items():
        source = ctx.get_parameter_source(name)
        if source is not None and source.name == "COMMANDLINE":
            raise fail_input(f"{flag} does not apply to --load agents: its verified agents "
                             "are a level of the search, not a users level")


def load_fields(
    load: str, max_concurrency: int | None, start_rate: float | None,
    rate_resolution: float | None,
) -> dict[str, object]:
    """The search's load and its own options; an option of the other load is refused (exit
    2, before any load), so a flag never silently does nothing."""
    if load not in ("concurrency", "rate", "agents"):
        raise fail_input(f"invalid --load {load!r}: use concurrency, rate or agents")
    given = {"--max-concurrency": max_concurrency, "--start-rate": start_rate,
             "--rate-resolution": rate_resolution}
    other = CONCURRENCY_ONLY if load == "rate" else RATE_ONLY
    misplaced = [flag for flag in other if given[flag] is not None]
    if misplaced:
        raise fail_input(f"{misplaced[0]} does not apply to --load {load}: it is an option "
                         f"of --load {'concurrency' if load == 'rate' else 'rate'}")
    fields: dict[str, object] = {"load": load, "max_concurrency": max_concurrency,
                                 "start_rate": start_rate, "rate_resolution": rate_resolution}
    return {k: v for k, v in fields.items() if v is not None}
