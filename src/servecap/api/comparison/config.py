"""`CompareConfig`: what `servecap compare` was asked.

Shared by `api.comparison.run` (which runs it) and `api.comparison.store` (which records it in
`comparison.json`); in a module of its own, `compare_store` need not import `compare`,
which imports `compare_store`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from servecap.api.comparison.targets import Target
from servecap.api.run.load_settings import LoadSettings, load_fields
from servecap.api.run.run_config import RunConfig
from servecap.core.config import SLO, parse_levels
from servecap.core.errors import bad_setting

# A comparison runs each level `repeats` times per target: fewer levels than a run's sweep.
DEFAULT_COMPARE_LEVELS: tuple[int, ...] = (1, 2, 4, 8)
DEFAULT_REPEATS = 3


def compare_workload(settings: LoadSettings, **fields: Any) -> RunConfig:
    """What every target of a comparison runs: the settings' load by the run's own rules
    (`api.run.load_settings`), over the comparison's levels when no concurrency is given;
    `fields` are the rest of the run's config. A refused value is pydantic's
    `ValidationError`, for each front end to name in its own words."""
    load = load_fields(settings)
    levels = (parse_levels(settings.concurrency) if settings.concurrency
              else list(DEFAULT_COMPARE_LEVELS))
    return RunConfig(concurrency=levels, **fields, **load)


@dataclass
class CompareConfig:
    """What `servecap compare` was asked: the targets, the shared workload, the repeats."""

    targets: list[Target]
    workload: RunConfig  # its name, model, base URL and extra body are per target
    repeats: int = DEFAULT_REPEATS
    allow_different_models: bool = False
    slo: SLO = field(default_factory=SLO)
    # (baseline, compared) names; empty: every target against the first
    pairs: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.repeats < 1:
            raise bad_setting("repeats", f"{self.repeats}: at least 1", "invalid ")
