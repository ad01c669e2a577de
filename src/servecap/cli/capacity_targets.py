"""`servecap capacity --target A=URL --target B=URL`: several deployments searched in turn.

The checks (before any load, exit 2) and the answer's printing; the search itself is
`api.capacity.targets`. Exit status: the highest of the targets' own codes (0 when every
target's C_max was found), 130 when interrupted (what was measured is written).
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import typer

from servecap.api.capacity.capacity import CapacityOptions
from servecap.api.capacity.targets import find_capacities, search_budget_s, targets_from
from servecap.api.comparison.targets import Target
from servecap.api.run.progress import NullProgress, ProgressSink
from servecap.api.run.run_config import RunConfig
from servecap.cli.common import EXIT_INTERRUPTED
from servecap.core.errors import SettingError
from servecap.core.level_key import LevelKey
from servecap.core.secrets import Secrets
from servecap.core.summary import LevelSummary
from servecap.storage.capacity_targets import CapacityTargetsAnswer

_PRINT = threading.Lock()  # every target's search reports from its own thread


def check_targets(
    specs: list[str] | None, ctx: typer.Context, options: CapacityOptions
) -> list[Target] | None:
    """The `--target`s, checked (exit 2 before any load); None when there are none."""
    if not specs:
        return None
    source = ctx.get_parameter_source("base_url")
    if source is not None and source.name != "DEFAULT":  # typed on the command line
        raise SettingError("{target} names each server: give it instead of {base_url}, "
                           "not both", "target", "base_url")
    targets = targets_from(specs)
    search_budget_s(options, len(targets))
    return targets


class _Lines(NullProgress):
    """One line per probe on stderr, named by its target (threads take turns to print)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def level_started(self, level: LevelKey, n_requests: int) -> None:
        _say(f"{self.name} {level}: probing")

    def level_done(self, summary: LevelSummary) -> None:
        _say(f"{self.name} {summary.key}: {summary.n_requests or 0} requests")


def _say(text: str) -> None:
    with _PRINT:
        print(text, file=sys.stderr, flush=True)


def _progress(name: str) -> ProgressSink:
    return _Lines(name)


def run_targets(
    targets: list[Target], config: RunConfig, options: CapacityOptions, secrets: Secrets,
    out: Path, output_format: str,
) -> None:
    """Search, print the answer, exit with its code."""
    try:
        answer = find_capacities(config, targets, options, out, secrets, _progress)
    except KeyboardInterrupt:
        print(f"interrupted: the probes measured so far are in {out / 'capacity.json'}, "
              "marked incomplete")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    print_targets(answer, output_format)
    raise typer.Exit(answer.exit_code())


def print_targets(answer: CapacityTargetsAnswer, output_format: str) -> None:
    """The sentence, then each target's own sentence and probes, in the order they ran."""
    if output_format == "json":
        print(answer.model_dump_json(indent=2))
        return
    print(answer.sentence())
    for target in answer.targets:
        print(f"  {target.sentence()}")
    print("probes in the order run: " + ", ".join(
        f"{turn.target} c={turn.concurrency}" for turn in answer.order))
    for target in answer.targets:
        for label, path in (("probes", target.probe_run), ("users", target.users_run)):
            if path:
                print(f"{target.deployment} {label} run: {path}")
