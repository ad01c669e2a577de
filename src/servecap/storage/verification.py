"""`verification.json`: what a `servecap verify` run found (predicted against verified users).

Written into the verify run's directory; `plan`, the report and the app read it to show the
prediction and the verified count side by side, on the verify run itself and on the sweep
it verified (`verification_for`: a verify run beside the sweep, verify's default output, or
among the runs loaded, made under the same SLO). Runs without the file are not verify runs.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from servecap.core.config import SLO
from servecap.storage.safe_files import read_model, write_model

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
    write_model(run_dir / VERIFICATION_FILE, result)


def load_verification(run_dir: Path) -> Verification | None:
    """A verify run's outcome, None for any other run (or an unreadable file)."""
    return read_model(run_dir / VERIFICATION_FILE, Verification)



def _is_source(result: Verification, run_dir: Path) -> bool:
    """Does `result` verify the sweep in `run_dir`? The stored source may be relative to
    where verify ran, so a run directory's name (unique: it carries the UTC time) also counts."""
    source = Path(result.source_run)
    try:
        if source.resolve() == run_dir.resolve():
            return True
    except OSError:
        pass
    return source.name == run_dir.name


def verifications_of(
    run_dir: Path, elsewhere: Sequence[Path] = ()
) -> list[tuple[Path, Verification]]:
    """The verify runs made from the sweep in `run_dir`, oldest first (by directory name,
    which ends in its UTC time): those beside it (verify's default output) and those in
    `elsewhere` (other run directories the caller loaded)."""
    candidates = {p.resolve() for p in elsewhere}
    with contextlib.suppress(OSError):
        candidates |= {p.parent.resolve() for p in run_dir.parent.glob(f"*/{VERIFICATION_FILE}")}
    found = []
    for directory in sorted(candidates, key=lambda p: p.name):
        result = load_verification(directory)
        if result is not None and directory != run_dir.resolve() and _is_source(result, run_dir):
            found.append((directory, result))
    return found


def matches(result: Verification, slo: SLO) -> bool:
    """Was `result` verified under `slo` (the same statistic, objectives and mean think
    time)? Only then are its verified users an answer to the same question."""
    ours = result.slo
    return (ours.statistic == slo.statistic and math.isclose(ours.ttft_ms, slo.ttft_ms)
            and math.isclose(ours.tps, slo.tps)
            and math.isclose(ours.think_time_s, slo.think_time_s, rel_tol=1e-6))


def verification_for(
    run_dir: Path, slo: SLO, elsewhere: Sequence[Path] = ()
) -> tuple[Path, Verification] | None:
    """The newest verify run of this sweep made under `slo`, None when there is none."""
    found = [item for item in verifications_of(run_dir, elsewhere) if matches(item[1], slo)]
    return found[-1] if found else None
