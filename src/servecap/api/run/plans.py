"""What the run engine asks of a plan: its steps, each decided after the one before it.

A plan's `steps()` is a generator. The engine runs the level each step names and sends the
generator that level's summary (None when the level recorded nothing), so an adaptive plan
(`--find-cmax`, verify's search, `servecap capacity`) reads what it measured at the point it
decides, in plain code:

    summary = yield Step(level)
    if summary is None: return  # stopped, or nothing recorded

A step may carry a `StopRule`: the engine shows it every record of the level as it ends, and
stops sending the level's requests once the rule has decided (what is in flight finishes and
counts); the rule also names the window the level's statistics count. A plan that is a
fixed list of levels (every load kind's `LoadPlan`) runs through `StaticPlan`.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Protocol

from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary
from servecap.kinds.base import LevelSpec, LoadPlan
from servecap.kinds.window import Window


class StopRule(Protocol):
    """Decides while a level runs whether it has measured enough."""

    def seen(self, record: RequestRecord) -> bool:
        """Take one ended record; True once the level has measured enough."""
        ...

    def window(self) -> Window | None:
        """The window the level's statistics count (None: the level's own)."""
        ...


@dataclass(frozen=True)
class Step:
    """One level for the engine to run, and the rule that may end it early."""

    level: LevelSpec
    until: StopRule | None = None


Steps = Generator[Step, LevelSummary | None, None]


class LevelPlan(Protocol):
    """What the engine needs of a run's plan."""

    def steps(self) -> Steps:
        """The levels in order; each `yield` receives the last level's summary."""
        ...

    def max_in_flight(self) -> int:
        """The most requests any level holds in flight (the connection pool's size)."""
        ...

    def expected_requests(self) -> int:
        """The requests the plan expects to send, for progress (a lower bound if adaptive)."""
        ...

    def known_levels(self) -> list[LevelSpec] | None:
        """Every level up front, or None for a plan that decides them as it goes."""
        ...


@dataclass(frozen=True)
class StaticPlan:
    """A load kind's fixed list of levels, as the engine's plan."""

    load: LoadPlan

    def steps(self) -> Steps:
        for level in self.load.levels():
            yield Step(level)

    def max_in_flight(self) -> int:
        return self.load.max_in_flight()

    def expected_requests(self) -> int:
        return sum(level.n_requests for level in self.load.levels())

    def known_levels(self) -> list[LevelSpec]:
        return list(self.load.levels())
