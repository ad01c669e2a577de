"""The admission policy: how long a request that reaches a busy scheduler waits to join it.

Pure (the caller passes its seeded generator). The hold's mean is, by the profile's
``admission`` policy:

- ``hold_knee``: ``admit_hold_steps * min(1, held / admit_hold_knee)`` decode steps of the
  running batch, where ``held`` counts the requests the scheduler holds, running or waiting:
  a wait that grows with the load, then stays. The unit is the batch's decode step, so a
  prefill chunk in the last step does not lengthen it;
- ``hold_steps``: ``admit_hold_steps`` steps as long as the last one (a scheduler that lets
  requests in at step boundaries holds them for steps, so the hold grows with the batch);
- ``hold_ms``: ``admit_interval_ms``;
- ``at_once``: none.

The draw is exponential (memoryless, so a client's few ms of turnaround move the means a
little rather than flipping a closed loop between lock-step cycles), or a gamma of shape
``admit_hold_shape`` where that is not 1 (same mean, less spread).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from servecap.sim.model.params import ModelParams


def hold_mean_s(
    p: ModelParams, held: int, last_step_s: float, decode_step_s: Callable[[], float]
) -> float:
    """The hold's mean in seconds where the scheduler holds ``held`` other requests, running
    or waiting (``decode_step_s`` is asked only for a hold with a knee)."""
    if p.admission == "hold_knee":
        return p.admit_hold_steps * min(1.0, held / p.admit_hold_knee) * decode_step_s()
    if p.admission == "hold_steps":
        return p.admit_hold_steps * last_step_s
    if p.admission == "hold_ms":
        return p.admit_interval_ms / 1000.0
    return 0.0


def gate_ratio(p: ModelParams) -> float:
    """Held requests join together once at least this share of the running batch is due:
    the ``hold_ms`` and ``hold_steps`` policies' ``admit_ratio`` (0: each joins when due)."""
    return p.admit_ratio if p.admission in ("hold_ms", "hold_steps") else 0.0


def draw_hold(rng: np.random.Generator, mean_s: float, shape: float) -> float:
    """One hold of mean ``mean_s``: exponential for shape 1 (the draws profiles without a
    shape always had), else a gamma of that shape."""
    if mean_s <= 0.0:
        return 0.0
    if shape == 1.0:
        return mean_s * float(rng.exponential())
    return mean_s * float(rng.gamma(shape, 1.0 / shape))


__all__ = ["draw_hold", "gate_ratio", "hold_mean_s"]
