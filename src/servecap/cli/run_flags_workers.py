"""`servecap run`'s flags for many processes and many hosts: `--workers` and `--ray`."""

from __future__ import annotations

import importlib.util
from typing import Annotated, Any

import typer

from servecap.api.run.run_workers import parse_workers
from servecap.core.errors import UserInputError
from servecap.core.summary import LevelSummary

WorkersOption = Annotated[
    str,
    typer.Option(help="Worker processes a level is split over: N, or auto (one process "
                 "while one core keeps up, one more per 256 streams)"),
]
RayOption = Annotated[
    str | None,
    typer.Option(help="Run the workers as Ray actors on this cluster (address, e.g. "
                 "127.0.0.1:6379 or auto; needs the ray extra)"),
]


def check_ray(address: str | None) -> str | None:
    """`--ray`: a non-empty address, and Ray installed, before any load."""
    if address is None:
        return None
    address = address.strip()
    if not address or any(ch.isspace() for ch in address):
        raise UserInputError(f"invalid --ray {address!r}: give the cluster's address")
    if importlib.util.find_spec("ray") is None:
        raise UserInputError("--ray needs Ray: pip install 'servecap[ray]'")
    return address


def config_fields(workers: str, ray: str | None) -> dict[str, Any]:
    """The RunConfig fields these flags set."""
    return {"workers": parse_workers(workers), "ray_address": check_ray(ray)}


def level_note(summary: LevelSummary) -> str:
    """A level's line in the terminal: how many workers ran it, which were client-bound,
    which died (empty for a level run in one process)."""
    if summary.workers is None:
        return ""
    note = f", {summary.workers} workers"
    if summary.workers_client_bound:
        note += " (client-bound: " + ", ".join(map(str, summary.workers_client_bound)) + ")"
    for worker in summary.workers_died or []:
        note += f"; worker {worker} died"
    return note


def run_notes(workers: dict[str, Any]) -> list[str]:
    """What the run says about its workers at the end: clocks apart, workers that died."""
    notes = [f"warning: {w}" for w in workers.get("warnings", [])]
    for death in workers.get("died", []):
        where = f" in {death['level']}" if death.get("level") else ""
        notes.append(f"worker {death['worker']} {death['why']}{where}")
    return notes
