"""Verified users in the report: which verify runs belong to which compared sweep.

A number of users in the report is either *predicted* (Little's law on a sweep's C_max) or
*verified* (a `servecap verify` run measured N users meeting the SLOs); every view says
which. A sweep's verification is the newest verify run made from it under the report's SLO
on that statistic, found beside the sweep (verify's default output) or among the runs
reported (`storage.verification.verification_for`). A verify run that is itself reported
shows its own outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from servecap.core.config import SLO
from servecap.report.model import RunMeta
from servecap.storage.verification import (
    Verification,
    load_verification,
    verification_for,
    verifications_of,
)


@dataclass(frozen=True)
class Found:
    """One verify run: the compared config it verifies, its directory and outcome."""

    config: str
    directory: Path
    result: Verification


def verify_runs(runs: Sequence[RunMeta]) -> list[Found]:
    """Every verify run of the reported sweeps and every reported verify run, once each."""
    paths = [Path(run.path) for run in runs]
    found: dict[Path, Found] = {}
    for run in runs:
        own = load_verification(Path(run.path))
        if own is not None:
            found.setdefault(Path(run.path).resolve(), Found(run.name, Path(run.path), own))
        for directory, result in verifications_of(Path(run.path), paths):
            found.setdefault(directory, Found(run.name, directory, result))
    return list(found.values())


def verified_users(runs: Sequence[RunMeta], slo: SLO) -> Callable[[str, str], int | None]:
    """`(config, statistic) -> verified users` under `slo` on that statistic: None when no
    verify run of that config was made under it, 0 when one was and no N passed."""
    paths = [Path(run.path) for run in runs]
    by_name = {run.name: run for run in runs}
    cache: dict[tuple[str, str], int | None] = {}

    def lookup(config: str, statistic: str) -> int | None:
        if (config, statistic) not in cache:
            run = by_name.get(config)
            judged = slo.model_copy(update={"statistic": statistic})
            found = verification_for(Path(run.path), judged, paths) if run else None
            cache[config, statistic] = None if found is None else found[1].verified_users or 0
        return cache[config, statistic]

    return lookup


def verified_cell(count: int | None) -> str:
    """The capacity table's verified-users cell."""
    if count is None:
        return "not verified"
    return f"{count} (measured)" if count else "none passed"
