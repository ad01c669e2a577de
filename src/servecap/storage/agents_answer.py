"""`servecap capacity --load agents`'s part of `capacity.json`, and the sentence it opens with.

An agents answer is a `CapacityAnswer` whose `agents` holds the largest number of concurrent
agents whose level met the task-time SLO and the per-call TTFT SLO (verified: that level
ran), the first N that missed above it, and the prediction (`stats.agents_prediction`): the
agents that keep the most streams busy, up to the concurrency boundary the same run found,
whose task time still meets the task-time SLO. Times are seconds on real time: a simulator
at time scale S ran its agents' tools and idle S times faster, and was judged on its own
clock.
"""

from __future__ import annotations

from pydantic import BaseModel

from servecap.storage.answer_view import AnswerView


class AgentFields(BaseModel):
    """The agents search's answer."""

    agents_max: int | None  # verified: the largest N whose level met the SLOs
    first_miss: int | None  # the smallest N above it that missed
    binding: str | None = None  # what the first miss broke ("task time", "TTFT", ...)
    # `stats.agents_prediction`: the agents at `predicted_streams` (at most C_max), with
    # `agents_per_stream` each there, bound by C_max or by the task time
    predicted_agents: int | None = None
    agents_per_stream: float | None = None
    predicted_streams: float | None = None  # a mean: not only whole streams
    predicted_bound: str | None = None
    task_time_slo_s: float
    task_time_s: float | None = None  # the statistic at agents_max, real time
    tasks_per_s: float | None = None  # at agents_max, real time
    lowest: int | None = None  # the smallest N probed (for "not even ...")
    max_agents: int | None = None  # the search's cap


def agents_sentence(answer: AnswerView, agents: AgentFields) -> str:
    """The agents answer in one sentence (see `CapacityAnswer.sentence`)."""
    cost = f"{answer.requests} calls in {_duration(answer.elapsed_s)}"
    head = "" if answer.complete else "INCOMPLETE (interrupted): "
    slos = _slos(answer, agents)
    scale = "" if answer.time_scale == 1 else f"; simulator at x{answer.time_scale:g}"
    if answer.status == "slo_missed_at_1":
        return (f"{head}{answer.deployment}: no agents level meets the SLOs ({slos}), not "
                f"even {agents.lowest} agent(s) ({cost}{scale}).")
    if agents.agents_max is None:
        return f"{head}{answer.deployment}: no number of agents was bracketed ({cost})."
    predicted = _predicted(answer, agents)
    stat = answer.slo.statistic.upper()
    measured = (f", {stat} task time {agents.task_time_s:.1f} s"
                if agents.task_time_s is not None else "")
    rate = f", {agents.tasks_per_s:.3g} tasks/s" if agents.tasks_per_s is not None else ""
    bracket = (f"first miss {agents.first_miss} agents on {agents.binding}"
               if agents.first_miss is not None else
               "not bounded: the highest number the search may probe"
               if agents.agents_max == agents.max_agents else "not bounded within the budget")
    return (f"{head}{answer.deployment} holds {agents.agents_max} agents verified "
            f"({predicted}) within {slos}; at {agents.agents_max} agents{measured}{rate}; "
            f"{bracket} ({cost}{scale}).")


def _predicted(answer: AnswerView, agents: AgentFields) -> str:
    if agents.predicted_agents is None or not agents.agents_per_stream:
        return ("not predicted: the task time would miss its SLO even at 1 stream"
                if answer.c_max else "not predicted: no concurrency boundary")
    if agents.predicted_bound == "task time":
        return (f"predicted {agents.predicted_agents} = {agents.predicted_streams:g} streams x "
                f"{agents.agents_per_stream:.2f} agents/stream, where the task time reaches "
                f"its SLO below C_max {answer.c_max}")
    return (f"predicted {agents.predicted_agents} = C_max {answer.c_max} x "
            f"{agents.agents_per_stream:.2f} agents/stream")


def _slos(answer: AnswerView, agents: AgentFields) -> str:
    stat = answer.slo.statistic.upper()
    return (f"{stat} task time <= {agents.task_time_slo_s:g} s and {stat} TTFT <= "
            f"{answer.slo.ttft_ms:g} ms per call")


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"
