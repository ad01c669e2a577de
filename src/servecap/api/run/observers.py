"""The observers a run puts around each level (a new observer is one line here).

Each is an async context manager with `fields()` (see `load.sweep.LevelObserver`): the
client monitor and the server-metrics scraper today; worker health is next.
"""

from __future__ import annotations

from servecap.api.run.server_metrics import observer_for_run
from servecap.kinds.base import LevelSpec
from servecap.load.monitor import ClientMonitor
from servecap.load.sweep import LevelObserver, ObserverFactory

LEVEL_OBSERVERS: tuple[ObserverFactory, ...] = (
    lambda level: ClientMonitor(),
    lambda level: observer_for_run(),
)


def level_observers(level: LevelSpec) -> list[LevelObserver]:
    """Fresh observers for one level."""
    return [make(level) for make in LEVEL_OBSERVERS]
