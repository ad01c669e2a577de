"""The admission hold: how long a request that reaches a busy scheduler waits to join it.

Pure (the caller passes its seeded generator). The hold's mean is, by the profile's choice:

- ``admit_hold_steps * min(1, held / admit_hold_knee)`` decode steps of the running batch,
  where ``held`` counts the requests the scheduler holds, running or waiting (with a knee:
  vLLM-direct's seed wait, counted in ITLs of its own level, is 3.5, 6.3, 20.7, 25.8, 23.0
  and 21.6 at c = 2..64: it grows with the load, then stays about 20-26 steps).
  The unit is the batch's decode step, not the last step: a hold measured by a step that
  carried a prefill chunk (every fifth step or so under users who arrive one at a time) came
  out about twice as long under users as in a closed loop (P90 TTFT 1.5 s against 0.8 s at
  419 users thinking 45 s). The count takes the waiting requests in because the seed's wait
  grows with its concurrency, which a closed loop's running batch alone understates: eight
  streams that fall into lock-step reach an engine that has just admitted the first of
  them, so the rest saw 1-7 running and were held for a fraction of the wait. Their c=8
  TTFT then swung from 165 to 312 ms over 12 seeded sweeps (the seed's: 388 ms), and one
  demo run through the real client missed it by 57%. Counting the waiting ones too, the
  same profile read 330-415 ms over 8 seeds before it was refitted;
- else ``admit_hold_steps`` steps as long as the last one (a hold in steps grows with the
  batch, as a scheduler that admits at step boundaries does). The last step may be a prefill
  batch run alone: a request that reaches it is held about that batch's length again.
  sglang-spec's fit rests on that (its P90 TTFT of about 1.1 s at c = 4-32); a hold that
  counted decode steps only refit to a mean error of 15% and a worst cell of 43% (8.5% and
  20% as is);
- else ``admit_interval_ms``.

The draw is exponential (memoryless), or a gamma of shape ``admit_hold_shape`` where that is
not 1 (same mean, less spread: a gamma(8)'s P90 is 1.47 times its mean, an exponential's 2.3).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from servecap.sim.params import ModelParams


def hold_mean_s(
    p: ModelParams, held: int, last_step_s: float, decode_step_s: Callable[[], float]
) -> float:
    """The hold's mean in seconds where the scheduler holds ``held`` other requests, running
    or waiting (``decode_step_s`` is asked only for a hold with a knee)."""
    if p.admit_hold_knee > 0.0:
        return p.admit_hold_steps * min(1.0, held / p.admit_hold_knee) * decode_step_s()
    if p.admit_hold_steps > 0.0:
        return p.admit_hold_steps * last_step_s
    return p.admit_interval_ms / 1000.0


def draw_hold(rng: np.random.Generator, mean_s: float, shape: float) -> float:
    """One hold of mean ``mean_s``: exponential for shape 1 (the draws profiles without a
    shape always had), else a gamma of that shape."""
    if mean_s <= 0.0:
        return 0.0
    if shape == 1.0:
        return mean_s * float(rng.exponential())
    return mean_s * float(rng.gamma(shape, 1.0 / shape))


__all__ = ["draw_hold", "hold_mean_s"]
