"""Pick the engine a profile's parameters call for: the step model or the fixed schedule."""

from __future__ import annotations

from servecap.sim.model.fixed_engine import FixedEngine
from servecap.sim.model.params import ModelParams
from servecap.sim.model.step_engine import StepEngine


def make_engine(params: ModelParams, seed: int = 0) -> StepEngine | FixedEngine:
    """The engine a profile's parameters call for."""
    if params.fixed:
        return FixedEngine(params)
    return StepEngine(params, seed=seed)
