"""`servecap verify --load agents`: run the agents a concurrency sweep predicts, and say how
far off it was.

The sweep gives C_max and its latency curve under the SLOs. A first level of N = C_max
agents (the task's shape from the flags) measures what a task costs the server
(`kinds.agents_verdict.predict_from`); from it and the curve `stats.agents_prediction`
predicts the agents within the task-time SLO. The predicted N runs next (unless it is the
first level again), judged on the task time and per-call TTFT (`kinds.agents_verdict`). A
miss, or `search`, brackets and bisects from every level measured so far: the first
missing N above the largest passing one, halving or doubling by `factor` until both are
known, then bisecting to within `tolerance`. The verified count is the largest N whose
level and every lower measured level passed (what `plan` says of the verify run);
`agents_verification.json` keeps the prediction beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field

from servecap.api.predict.verify import sweep_run, verify_config
from servecap.api.run.plans import Step, Steps
from servecap.api.run.progress import NullProgress, ProgressSink
from servecap.api.run.run import RunOutcome, Secrets, run_benchmark
from servecap.core.config import SLO
from servecap.core.errors import UserInputError
from servecap.core.summary import LevelSummary
from servecap.kinds.agents import AgentsLevel, AgentsLoad
from servecap.kinds.agents_verdict import (
    concurrency_boundary,
    judge_level,
    plan_agents,
    predict_from,
)
from servecap.stats.agents_prediction import AgentsPrediction
from servecap.stats.response_time import relative_error
from servecap.stats.search import DEFAULT_BUDGET, DEFAULT_FACTOR, DEFAULT_TOLERANCE, BoundarySearch
from servecap.storage.agents_verification import AgentsVerification, write_agents_verification
from servecap.storage.runs import Run


class AgentsVerifyOptions(BaseModel):
    """What to verify against and how far to search (the task's shape is `AgentsLoad`'s)."""

    slo: SLO  # with the task-time SLO
    search: bool = False  # search on past a predicted N that passed too
    tolerance: float = Field(default=DEFAULT_TOLERANCE, gt=0, lt=1)
    budget: int = Field(default=DEFAULT_BUDGET, ge=1)
    factor: float = Field(default=DEFAULT_FACTOR, gt=1)
    max_agents: int = Field(default=256, ge=1)
    out_dir: str | None = None  # default: beside the sweep


@dataclass
class AgentsVerifyPlan:
    """The first level of C_max agents, the predicted N, then the search (see the module)."""

    task: AgentsLoad  # the task's shape, duration and seed; `agents` is set per level
    c_max: int
    curve: list[tuple[int, float]]
    options: AgentsVerifyOptions
    summaries: list[LevelSummary] = field(default_factory=list)
    prediction: AgentsPrediction | None = None

    def max_in_flight(self) -> int:
        return self.options.max_agents

    def expected_requests(self) -> int:
        return self.calibration()

    def known_levels(self) -> None:
        return None

    def calibration(self) -> int:
        return min(self.c_max, self.options.max_agents)

    def _level(self, agents: int) -> AgentsLevel:
        return self.task.model_copy(update={"agents": [agents]}).levels()[0]

    def steps(self) -> Steps:
        first = self.calibration()
        summary = yield Step(self._level(first))
        if summary is None:
            return  # stopped: the level recorded nothing
        self.summaries.append(summary)
        self.prediction = predict_from(summary, self.curve, self.c_max, self.options.slo)
        passed = {first: judge_level(summary, self.options.slo).passed}
        agents: int | None = self._start()
        while agents is not None and len(passed) <= self.options.budget:
            if agents not in passed:
                summary = yield Step(self._level(agents))
                if summary is None:
                    return
                self.summaries.append(summary)
                passed[agents] = judge_level(summary, self.options.slo).passed
            if agents == self._start() and passed[agents] and not self.options.search:
                return  # the prediction held: nothing to search for
            agents = self._next(passed)

    def _start(self) -> int:
        predicted = self.prediction.agents if self.prediction is not None else 1
        return min(max(1, predicted), self.options.max_agents)

    def _next(self, passed: dict[int, bool]) -> int | None:
        """The next N from every level measured: the bracket's (`stats.search`)."""
        failing = [n for n, ok in passed.items() if not ok]
        upper = min(failing) if failing else None
        below = [n for n, ok in passed.items() if ok and (upper is None or n < upper)]
        search = BoundarySearch(lower=max(below) if below else 0, upper=upper,
                                tolerance=self.options.tolerance, budget=1,
                                factor=self.options.factor, maximum=self.options.max_agents)
        return search.next_probe()


def verify_agents(
    path: Path, task: AgentsLoad, options: AgentsVerifyOptions, secrets: Secrets | None = None,
    progress: ProgressSink | None = None,
) -> tuple[AgentsVerification, RunOutcome]:
    """Predict the agents from the sweep at `path`, run them; bad input raises first."""
    run = sweep_run([path])
    c_max, curve = _sweep(run, options.slo)
    config = verify_config(run, task, options.out_dir or str(run.path.parent), "agents")
    plan = AgentsVerifyPlan(task, c_max, curve, options)
    outcome = run_benchmark(config, secrets, progress or NullProgress(), plan=plan)
    result = _verification(run, plan)
    write_agents_verification(outcome.run_dir, result)
    return result, outcome


def _sweep(run: Run, slo: SLO) -> tuple[int, list[tuple[int, float]]]:
    """The sweep's C_max under `slo` and its closed levels' mean latencies."""
    c_max, curve = concurrency_boundary(run.levels, slo)
    if not c_max:
        raise UserInputError(f"{run.path}: verifying agents needs a concurrency sweep with "
                             f"a level within the SLOs ({slo.statistic}) to predict from")
    return c_max, curve


def _verification(run: Run, plan: AgentsVerifyPlan) -> AgentsVerification:
    judged = plan_agents(plan.summaries, plan.options.slo)
    if judged is None:
        raise UserInputError("the verify run measured no agents level")
    prediction = plan.prediction
    verified = judged.agents_max
    predicted = prediction.agents if prediction is not None else None
    return AgentsVerification(
        source_run=str(run.path), slo=plan.options.slo, c_max=plan.c_max,
        calibration=plan.calibration(), predicted_agents=predicted,
        predicted_streams=prediction.streams if prediction else None,
        predicted_bound=prediction.bound if prediction else None,
        agents_per_stream=prediction.per_stream if prediction else None,
        verified_agents=verified,
        prediction_error=relative_error(predicted, verified) if predicted and verified else None,
        levels=judged.levels,
    )


def agents_summary_line(result: AgentsVerification) -> str:
    """One paragraph for the terminal: predicted against verified."""
    stat = result.slo.statistic.upper()
    slos = (f"{stat} task time <= {result.slo.task_time_s:g} s and {stat} TTFT <= "
            f"{result.slo.ttft_ms:g} ms per call")
    if result.predicted_agents is None:
        predicted = (f"predicted agents: none (from C_max {result.c_max} and the level of "
                     f"{result.calibration} agents, the task time misses its SLO even at "
                     "one stream)")
    else:
        predicted = (f"predicted agents: {result.predicted_agents} = "
                     f"{result.predicted_streams:g} streams x {result.agents_per_stream:.2f} "
                     f"agents/stream, bound by {result.predicted_bound} (C_max {result.c_max}, "
                     f"scaled from the level of {result.calibration} agents)")
    levels = ", ".join(f"{lv.agents} {lv.verdict}" for lv in result.levels)
    error = ("" if result.prediction_error is None
             else f" (prediction error {100 * result.prediction_error:+.1f}%)")
    verified = result.verified_agents if result.verified_agents is not None else "none"
    return "\n".join([predicted, f"levels ({slos}): {levels}",
                      f"verified agents: {verified}{error}"])
