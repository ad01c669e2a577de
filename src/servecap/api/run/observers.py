"""The observers a run puts around each level (a new observer is one line here).

Each is an async context manager with `fields()` (see `load.sweep.LevelObserver`): the
client monitor, the server-metrics scraper and the prefix cache's reset today. Each is made
for one level from the level and the run's context (what the run set up for its observers:
the scraper, the prefix-cache setup).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from servecap.api.run.power_metrics import PowerObserver, PowerScraper
from servecap.api.run.prefix_cache import PrefixCacheObserver, PrefixCacheSetup
from servecap.api.run.server_metrics import RunScraper, ServerMetricsObserver
from servecap.kinds.base import LevelSpec
from servecap.load.monitor import ClientMonitor
from servecap.load.sweep import LevelObserver


@dataclass(frozen=True)
class RunContext:
    """What a run hands its observers: the server-metrics scraper and the prefix-cache
    setup (each None when off)."""

    scraper: RunScraper | None = None
    prefix: PrefixCacheSetup | None = None
    power: PowerScraper | None = None  # `--power-metrics`: the DCGM exporter's


ObserverFactory = Callable[[LevelSpec, RunContext], LevelObserver]

LEVEL_OBSERVERS: tuple[ObserverFactory, ...] = (
    # first: the cache is reset before the other observers take their first look
    lambda level, context: PrefixCacheObserver(context.prefix),
    lambda level, context: ClientMonitor(),
    lambda level, context: ServerMetricsObserver(context.scraper),
    lambda level, context: PowerObserver(context.power),
)


def level_observers(level: LevelSpec, context: RunContext) -> list[LevelObserver]:
    """Fresh observers for one level of the run `context` belongs to."""
    return [make(level, context) for make in LEVEL_OBSERVERS]
