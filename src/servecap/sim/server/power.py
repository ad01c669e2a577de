"""A DCGM-shaped power series derived from the simulator's own batch (``GET /dcgm``).

Power is ``idle_w + per_request_w x running`` (the requests in the running batch), split
evenly over ``gpus``; the energy counter is that power integrated exactly over real time:
the meter is told every time the batch may have changed (each engine step, each new or
cancelled request), so between two updates the power is constant. The exposition uses
DCGM exporter names and units: ``DCGM_FI_DEV_POWER_USAGE`` in W and
``DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION`` in mJ, one series per ``gpu`` label.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class PowerModel:
    """Watts at idle, watts each running request adds, and the GPUs they are spread over."""

    idle_w: float = 60.0
    per_request_w: float = 8.0
    gpus: int = 1

    def __post_init__(self) -> None:
        if self.idle_w < 0 or self.per_request_w < 0 or self.gpus < 1:
            raise ValueError("power: watts must be >= 0 and gpus >= 1")


class PowerMeter:
    """Integrates the model's power over real time, piecewise constant between updates."""

    def __init__(self, model: PowerModel, clock: Callable[[], float] = time.monotonic) -> None:
        self.model = model
        self._clock = clock
        self._t = clock()
        self._running = 0
        self._joules = 0.0

    def watts(self) -> float:
        return self.model.idle_w + self.model.per_request_w * self._running

    def update(self, running: int) -> None:
        """The batch now holds `running` requests (the time since the last update ran at
        the old power)."""
        now = self._clock()
        self._joules += self.watts() * (now - self._t)
        self._t, self._running = now, running

    def read(self) -> tuple[float, float]:
        """(watts now, joules so far), the energy brought up to now first."""
        self.update(self._running)
        return self.watts(), self._joules


def render_dcgm(meter: PowerMeter) -> str:
    """The exposition a DCGM exporter would serve for this meter's GPUs."""
    watts, joules = meter.read()
    n = meter.model.gpus
    lines = ["# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).",
             "# TYPE DCGM_FI_DEV_POWER_USAGE gauge"]
    lines += [f'DCGM_FI_DEV_POWER_USAGE{{gpu="{i}",UUID="GPU-sim-{i}"}} {watts / n!r}'
              for i in range(n)]
    lines += ["# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot "
              "(in mJ).", "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter"]
    lines += [f'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{gpu="{i}",UUID="GPU-sim-{i}"}} '
              f'{joules * 1000 / n!r}' for i in range(n)]
    return "\n".join(lines) + "\n"
