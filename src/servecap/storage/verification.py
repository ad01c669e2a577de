"""`verification.json`: what a `servecap verify` run found (predicted against verified users).

Written into the verify run's directory; `plan` and the report read it to show the
prediction and the verified count side by side. Runs without the file are not verify runs.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from servecap.core.config import SLO

VERIFICATION_FILE = "verification.json"


class LevelCheck(BaseModel):
    """One measured users level: its numbers on the statistic, verdict and the law check."""

    users: int
    ttft: float | None
    tps: float | None
    verdict: str
    mean_concurrency: float | None
    law_concurrency: float | None
    law_error: float | None


class Verification(BaseModel):
    """`verification.json`: the prediction, what the users measured, and the verified N."""

    source_run: str
    statistic: str
    slo: SLO
    think: str
    c_max: int
    latency_mean_s: float
    predicted_users: int
    at_predicted: LevelCheck
    concurrency_vs_c_max: float | None  # (measured mean concurrency - C_max) / C_max
    verified_users: int | None = None  # the largest N that passed (search); None: not found
    prediction_error: float | None = None  # (predicted - verified) / verified
    search_status: str | None = None
    search_message: str | None = None
    levels: list[LevelCheck] = []


def write_verification(run_dir: Path, result: Verification) -> None:
    (run_dir / VERIFICATION_FILE).write_text(result.model_dump_json(indent=2) + "\n")


def load_verification(run_dir: Path) -> Verification | None:
    """A verify run's outcome, None for any other run (or an unreadable file)."""
    path = run_dir / VERIFICATION_FILE
    if not path.is_file():
        return None
    try:
        return Verification.model_validate(json.loads(path.read_text()))
    except (ValueError, OSError):
        return None


