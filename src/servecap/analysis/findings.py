"""A finding: one sentence computed from the data, with the numbers it cites."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from servecap.core.level_key import LevelKey

Section = Literal[
    "summary",
    "ttft",
    "itl",
    "tps",
    "latency",
    "throughput",
    "aggregate",
    "speedup",
    "slo",
    "capacity",
    "consistency",
    "data",
    "server",
]
Severity = Literal["info", "notice", "warning"]


class Finding(BaseModel):
    """A statement about the runs; `numbers` holds every value its text cites."""

    kind: str
    section: Section
    text: str
    configs: list[str] = Field(default_factory=list)
    level: LevelKey | None = None
    numbers: dict[str, float | None] = Field(default_factory=dict)
    severity: Severity = "info"
