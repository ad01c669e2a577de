"""Shared helpers: drive `servecap run` in-process and read what it stored."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from servecap.cli.main import app


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str
    exception: BaseException | None


def invoke(args: list[str], env: dict[str, str] | None = None) -> CliResult:
    """Run the servecap CLI in-process; stdout and stderr kept apart."""
    result = CliRunner().invoke(app, args, env=env, catch_exceptions=True)
    exc = result.exception if not isinstance(result.exception, SystemExit) else None
    return CliResult(result.exit_code, result.stdout, result.stderr, exc)


def run_args(base_url: str, out: Path, *extra: str) -> list[str]:
    """A tiny sweep: one stream, three requests, no warm-up, short timeouts.

    The stall timeout is 20 drip-feed intervals (50 ms): the fault server runs in a thread of
    the test process, and a pause of that process (a full collection of its large heap, a
    busy CI machine) once held a drip-feed chunk back past a 0.4 s stall timeout."""
    return [
        "run", "--base-url", base_url, "--concurrency", "1", "--rounds", "3",
        "--warmup", "0", "--output-tokens", "4", "--input-tokens", "8",
        "--timeout", "3", "--stall-timeout", "1", "--connect-timeout", "1",
        "--out", str(out), *extra,
    ]


def only_run_dir(out: Path) -> Path:
    dirs = [p for p in out.iterdir() if (p / "run.json").is_file()]
    assert len(dirs) == 1, dirs
    return dirs[0]


def rows(run_dir: Path) -> list[dict[str, Any]]:
    lines = (run_dir / "requests.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def summary(run_dir: Path) -> list[dict[str, Any]]:
    data = json.loads((run_dir / "summary.json").read_text())
    assert isinstance(data, list)
    return data


def run_info(run_dir: Path) -> dict[str, Any]:
    data = json.loads((run_dir / "run.json").read_text())
    assert isinstance(data, dict)
    return data


def invoke_report(args: list[str], env: dict[str, str] | None = None) -> CliResult:
    """`servecap report ARGS`, also before the command is registered in the main app."""
    import typer

    from servecap.cli.report_cmd import report

    names = {c.name or getattr(c.callback, "__name__", "") for c in app.registered_commands}
    if "report" in names:
        return invoke(["report", *args], env)
    standalone = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    standalone.command()(report)
    result = CliRunner().invoke(standalone, args, env=env, catch_exceptions=True)
    exc = result.exception if not isinstance(result.exception, SystemExit) else None
    return CliResult(result.exit_code, result.stdout, result.stderr, exc)
