"""Warm-up and drift: a server slower in its first seconds, and one that slows as it runs.

Both multiply a step's duration by a factor of the server's uptime ``t``: virtual seconds
since its first request arrived, not since it started, because an engine warms up by serving
(compiled kernels, allocator pools, caches) and a client's own start-up must not use up a
slow start it is meant to measure: the warm-up factor decays linearly from ``warmup_factor`` at
t = 0 to 1 at ``warmup_s``; the drift factor is ``1 + drift_per_min * t / 60``. Both are
off (1) by default. They give steady-state detection something to detect: a level measured
during warm-up is slower than the same level later, and under drift no level is steady.
"""

from __future__ import annotations

from servecap.sim.model.params import ModelParams


def slowdown(p: ModelParams, uptime_s: float) -> float:
    """The factor a step that starts at ``uptime_s`` takes longer by (1: no slowdown)."""
    factor = 1.0
    if p.warmup_s > 0.0 and uptime_s < p.warmup_s:
        factor *= 1.0 + (p.warmup_factor - 1.0) * (1.0 - max(0.0, uptime_s) / p.warmup_s)
    if p.drift_per_min > 0.0:
        factor *= 1.0 + p.drift_per_min * max(0.0, uptime_s) / 60.0
    return factor


def slows(p: ModelParams) -> bool:
    """True when the profile has warm-up or drift (the engines skip the factor otherwise)."""
    return (p.warmup_s > 0.0 and p.warmup_factor > 1.0) or p.drift_per_min > 0.0


class EngineSlowdown:
    """One engine's warm-up and drift factor, its uptime counted from its first request."""

    def __init__(self, p: ModelParams) -> None:
        self._p = p
        self._on = slows(p)
        self._since: float | None = None

    def arrived(self, now: float) -> None:
        """A request arrived at ``now`` (the first one starts the uptime)."""
        if self._since is None:
            self._since = now

    def at(self, t: float) -> float:
        """The factor for a step or chunk scheduled at ``t``."""
        if not self._on or self._since is None:
            return 1.0
        return slowdown(self._p, t - self._since)


__all__ = ["EngineSlowdown", "slowdown", "slows"]
