"""Say which numbers are simulated, and how far the simulator's profile is to be trusted.

A run against `servecap sim` records the simulator's `/version` (profile, time scale, and
since issue 20 the profile's `[calibration]` errors); the report labels such a run's numbers
as simulated with the profile's held-out error: fitted on part of its levels, how far off
the others came out (mean absolute error over TTFT, ITL, TPS and latency means).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _pct(value: Any) -> str | None:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return f"{value:.1%}" if number else None


def simulated_label(server: Mapping[str, Any]) -> str:
    """``"simulated (servecap sim, profile vllm-direct): held-out error 7.1%, worst cell
    24%"``; ``"no: a real server"`` when the run's server was not the simulator."""
    version = server.get("version")
    if not isinstance(version, Mapping) or version.get("server") != "servecap-sim":
        return "no: a real server"
    head = f"simulated (servecap sim, profile {version.get('profile', '?')})"
    cal = version.get("calibration")
    if not isinstance(cal, Mapping) or (held := _pct(cal.get("holdout_mape"))) is None:
        return f"{head}: the profile publishes no held-out error"
    worst = _pct(cal.get("holdout_max_cell_error"))
    label = f"{head}: held-out error {held}" + (f", worst cell {worst}" if worst else "")
    measure_next = cal.get("measure_next")
    if isinstance(measure_next, str) and measure_next:
        label += (f"; fitted parameters loose at {measure_next}, which it was not fitted on "
                  f"({cal.get('loose', '')})")  # fmt: skip
    return label
