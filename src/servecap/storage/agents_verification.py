"""`agents_verification.json`: what `servecap verify --load agents` predicted and verified.

A verify run of agents holds only agents levels, so its own plan has no concurrency levels
to predict from: the prediction it made from the sweep is stored here, and `agents_plan_of`
puts it beside the verified count its levels give.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from servecap.core.config import SLO
from servecap.kinds.agents_verdict import AgentLevelVerdict, AgentsPlan, plan_agents
from servecap.storage.run_dir import Run
from servecap.storage.safe_files import read_model, write_model

AGENTS_VERIFICATION_FILE = "agents_verification.json"


class AgentsVerification(BaseModel):
    """The sweep's prediction of the agents, and the agents levels that checked it."""

    source_run: str
    slo: SLO
    c_max: int  # the sweep's, under `slo`
    calibration: int  # the agents level the prediction started from (N = C_max)
    predicted_agents: int | None  # None: the task time misses its SLO even at one stream
    predicted_streams: float | None
    predicted_bound: str | None
    agents_per_stream: float | None
    verified_agents: int | None  # that level and every lower one measured passed
    prediction_error: float | None  # (predicted - verified) / verified
    levels: list[AgentLevelVerdict]


def write_agents_verification(run_dir: Path, result: AgentsVerification) -> None:
    write_model(run_dir / AGENTS_VERIFICATION_FILE, result)


def load_agents_verification(run_dir: Path) -> AgentsVerification | None:
    """A verify run's agents outcome, None for any other run (or an unreadable file)."""
    return read_model(run_dir / AGENTS_VERIFICATION_FILE, AgentsVerification)


def agents_plan_of(run: Run, slo: SLO) -> AgentsPlan | None:
    """The run's agents under `slo` (`kinds.agents_verdict.plan_agents`); a verify run of
    agents adds the prediction it made from its sweep."""
    plan = plan_agents(run.levels, slo)
    stored = load_agents_verification(Path(run.path))
    if plan is None or stored is None or plan.predicted_agents is not None:
        return plan
    return plan.model_copy(update={
        "predicted_agents": stored.predicted_agents,
        "predicted_streams": stored.predicted_streams,
        "predicted_bound": stored.predicted_bound,
        "agents_per_stream": stored.agents_per_stream, "c_max": stored.c_max,
    })
