"""Probes interleaved between targets: one target loads its server at a time, in rotation.

Each target's search runs in a thread of its own (its own event loop and run directory);
`Turns` lets one of them measure at a time, so drift on the machine (or on a shared
network) hits every target alike, and no target's client competes with another's for the
interpreter while it stamps. A target takes its first turn before its warm-up and only once
every target has checked its server (a target that cannot start stops them all before any
load), then passes the turn on after each probe; a target whose search has ended leaves the
rotation. `TurnPlan` wraps a `CapacitySearch` so the engine runs it turn by turn.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from servecap.api.capacity.search_plan import CapacitySearch
from servecap.api.run.plans import Steps
from servecap.kinds.base import LevelSpec
from servecap.storage.capacity_targets import ProbeTurn


class Turns:
    """Whose turn it is; `order` records every probe in the order the turns ran them."""

    def __init__(self, names: list[str]) -> None:
        self._active = list(names)
        self._arrived: set[str] = set()
        self._turn = 0
        self._cond = threading.Condition()
        self.stopped = False
        self.order: list[ProbeTurn] = []

    def take(self, name: str) -> bool:
        """Block until every target is ready and it is `name`'s turn; False once stopped."""
        with self._cond:
            self._arrived.add(name)
            self._cond.notify_all()
            self._cond.wait_for(lambda: self.stopped or self._holds(name))
            return not self.stopped

    def _holds(self, name: str) -> bool:
        ready = self._arrived.issuperset(self._active)
        return ready and bool(self._active) and self._active[self._turn] == name

    def ran(self, name: str, concurrency: int) -> None:
        with self._cond:
            self.order.append(ProbeTurn(target=name, concurrency=concurrency))

    def pass_on(self, name: str) -> None:
        """`name` has finished its probe: the next target's turn."""
        with self._cond:
            if self._active and self._active[self._turn] == name:
                self._turn = (self._turn + 1) % len(self._active)
                self._cond.notify_all()

    def leave(self, name: str) -> None:
        """`name`'s search has ended (or failed): the rotation goes on without it."""
        with self._cond:
            if name not in self._active:
                return
            current = self._active[self._turn]
            index = self._active.index(name)
            self._active.remove(name)
            if self._active:
                self._turn = (index % len(self._active) if current == name
                              else self._active.index(current))
            self._cond.notify_all()

    def stop(self) -> None:
        """Every waiting target returns, and none takes another turn."""
        with self._cond:
            self.stopped = True
            self._cond.notify_all()


@dataclass
class TurnPlan:
    """A target's search as the engine's plan, each probe in the target's turn; no probe
    starts after `deadline` (the searches share one budget)."""

    search: CapacitySearch
    turns: Turns
    name: str
    deadline: float

    def steps(self) -> Steps:
        inner = self.search.steps()
        try:
            step = next(inner)
            while self.turns.take(self.name):
                if time.monotonic() >= self.deadline:
                    self.search.out_of_time = True
                    return
                self.turns.ran(self.name, int(step.level.key.value))
                summary = yield step
                self.turns.pass_on(self.name)
                # the search records the probe now, not at its next turn: an interrupt
                # while the others probe keeps it
                step = inner.send(summary)
        except StopIteration:
            return
        finally:
            inner.close()
            self.turns.leave(self.name)

    def max_in_flight(self) -> int:
        return self.search.max_in_flight()

    def expected_requests(self) -> int:
        return self.search.expected_requests()

    def known_levels(self) -> list[LevelSpec] | None:
        return None  # decided as it goes, as the search's own
