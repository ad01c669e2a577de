"""Help that teaches: every command's `--help` ends with examples, and a mistyped command
gets the closest one (or the list of commands when nothing is close)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer.main

from servecap.cli.examples import EXAMPLES
from servecap.cli.main import app


def all_commands() -> list[list[str]]:
    """Every command path of the app, from its click tree: [[], ["run"], ["sim", "predict"]]."""
    found: list[list[str]] = []

    def walk(path: list[str], command: object) -> None:
        found.append(path)
        for name, sub in getattr(command, "commands", {}).items():
            walk([*path, name], sub)

    walk([], typer.main.get_command(app))
    return found


def servecap(*args: str) -> subprocess.CompletedProcess[str]:
    # a real process at 80 columns: what a newcomer's terminal shows
    return subprocess.run(
        [sys.executable, "-c", "from servecap.cli.main import app; app()", *args],
        capture_output=True, text=True, timeout=60, env={"COLUMNS": "80", "PATH": "",
                                                        "PYTHONPATH": ":".join(sys.path)},
    )


def test_every_command_has_examples() -> None:
    commands = {" ".join(path) for path in all_commands()}
    assert commands == set(EXAMPLES)
    for lines in EXAMPLES.values():
        assert 1 <= len(lines) <= 3
        assert all(line.startswith("servecap") and len(line) <= 76 for line in lines), lines


@pytest.mark.slow
@pytest.mark.parametrize("path", [[], ["run"], ["sim", "predict"]])
def test_help_ends_with_its_examples_on_whole_lines(path: list[str]) -> None:
    done = servecap(*path, "--help")
    assert done.returncode == 0, done.stderr
    text = [line.strip(" │") for line in done.stdout.splitlines() if line.strip(" │")]
    examples = EXAMPLES[" ".join(path)]
    # the last lines are the examples, each whole (not wrapped), after an "Examples:" line
    assert text[-len(examples):] == list(examples), text[-6:]
    assert text[-len(examples) - 1] == "Examples:"


@pytest.mark.slow
def test_a_mistyped_command_gets_the_closest_one() -> None:
    for typo, meant in ((["rnu"], "run"), (["verfy"], "verify"), (["sim", "predcit"], "predict")):
        done = servecap(*typo)
        assert done.returncode == 2
        assert f"Did you mean '{meant}'?" in done.stderr, done.stderr


@pytest.mark.slow
def test_a_command_nothing_like_any_lists_them() -> None:
    done = servecap("warp-drive")
    assert done.returncode == 2
    assert "No such command 'warp-drive'" in done.stderr
    assert "The commands: capacity, run, show, plan" in done.stderr
