"""How the compared deployments differ, computed from each run's `deployment` and `server`."""

from __future__ import annotations

import json
from typing import Any

from servecap.report.model import DeploymentTable, RunMeta

COMMAND_KEYS = ("launch_command", "command", "cmd", "docker_command")
MISSING = "-"
SERVER_KEYS = ("engine", "models", "header_server")


def flatten(data: Any, prefix: str = "") -> dict[str, str]:
    """Nested dicts to dotted keys; `--flag value` lists to one key per flag."""
    out: dict[str, str] = {}
    if isinstance(data, dict):
        for key, value in data.items():
            out.update(flatten(value, f"{prefix}{key}."))
        return out
    key = prefix.rstrip(".")
    if isinstance(data, list) and data and all(isinstance(x, str) for x in data):
        flags = _flags(data)
        if flags is not None:
            return {f"{key}.{flag}": value for flag, value in flags.items()}
        return {key: " ".join(data)}
    if isinstance(data, list):
        return {key: json.dumps(data, sort_keys=True)}
    return {key: "" if data is None else str(data)}


def _flags(items: list[str]) -> dict[str, str] | None:
    if not items[0].startswith("-"):
        return None
    flags: dict[str, str] = {}
    current: str | None = None
    for item in items:
        if item.startswith("-"):
            name, eq, value = item.partition("=")
            current = name
            flags[name] = value if eq else "true"
        elif current is not None:
            flags[current] = item if flags[current] == "true" else f"{flags[current]} {item}"
    return flags


def _command(data: dict[str, Any]) -> str | None:
    for key in COMMAND_KEYS:
        value = data.get(key)
        if isinstance(value, list):
            return " ".join(str(v) for v in value)
        if isinstance(value, str) and value:
            return value
    return None


def deployment_table(runs: list[RunMeta]) -> DeploymentTable:
    """Every setting per run, which of them differ, and each run's launch command."""
    values: dict[str, dict[str, str]] = {}
    commands: dict[str, str] = {}
    for run in runs:
        deployment = {k: v for k, v in run.deployment.items() if k not in COMMAND_KEYS}
        # Raw probe bodies (/props, /version, ...) are kept in run.json, not tabled: the
        # detected engine summary says what differs without dozens of incidental rows.
        server = {k: run.server[k] for k in SERVER_KEYS if k in run.server}
        flat = flatten({"deployment": deployment, "server": server})
        values[run.name] = {k.removeprefix("deployment."): v for k, v in flat.items()}
        command = _command(run.deployment)
        if command:
            commands[run.name] = command
    keys = sorted({k for row in values.values() for k in row})
    differing = [k for k in keys if len({values[r].get(k, MISSING) for r in values}) > 1]
    return DeploymentTable(keys=keys, values=values, differing=differing, commands=commands)
