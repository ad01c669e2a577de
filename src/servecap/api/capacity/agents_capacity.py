"""`servecap capacity --load agents`: the concurrent agents a server holds within a task-time
SLO and the per-call TTFT SLO, predicted and verified in one run.

The search is `agents_search`'s: the concurrency boundary C_max first, then levels of N
agents doubled and bisected. The verified count is the largest N whose own level met the
SLOs (there is no separate users run: the answer already ran); the predicted count is C_max
x the agents one stream holds at that level (`agents_per_stream`). `agent_capacity_fields`
checks the agents' settings before any load, each error naming its setting.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from servecap.api.capacity.agents_search import AgentCapacitySearch, AgentMeasured
from servecap.api.capacity.capacity import CapacityOptions, SearchWatch, search_answer
from servecap.api.capacity.cost import price_answer
from servecap.api.capacity.probe_rule import ProbeSettings
from servecap.api.run.agent_settings import AgentSettings, agents_load
from servecap.api.run.progress import NullProgress, ProgressSink
from servecap.api.run.run import Secrets, run_benchmark
from servecap.api.run.run_config import RunConfig
from servecap.core.errors import SettingError, bad_setting
from servecap.kinds.agents import AgentsLoad
from servecap.kinds.agents_verdict import predict_from
from servecap.stats.search import SearchStatus
from servecap.storage.agents_answer import AgentFields
from servecap.storage.capacity_answer import CapacityAnswer, ProbeRow, Status, write_answer

# The settings only `load agents` reads (besides the task's shape, `AgentSettings`).
AGENT_ONLY = ("task_time_slo_s", "max_agents", "agents_duration_s")


def agent_capacity_fields(
    load: str, given: Mapping[str, float | None], task: AgentSettings, endpoint: str,
    think_time: str, seed: int,
) -> dict[str, object]:
    """The agents' capacity options from their settings (`given`: those of `AGENT_ONLY` as
    given, None when not), checked before any load: an agents setting without `load agents`,
    or a number that is not positive, raises a `SettingError` naming its setting."""
    shaped = [name for name, changed in task.shaping().items() if changed]
    named = [name for name in AGENT_ONLY if given.get(name) is not None] + shaped
    if load != "agents":
        if named:
            raise SettingError(f"{{{named[0]}}} applies only to {{load}} agents (the "
                               f"search for concurrent agents), not {load}", named[0], "load")
        return {}
    for name, value in given.items():
        if value is not None and not (math.isfinite(value) and value > 0):
            raise bad_setting(name, f"{value:g}: must be a number > 0", "invalid ")
    fields: dict[str, object] = {k: v for k, v in given.items() if v is not None}
    # a level of one agent stands for the task's shape: the search sets N and the times
    fields["agent_task"] = agents_load(replace(task, agents="1"), endpoint, think_time, 0.0,
                                       None, seed)
    return fields


def find_agents_capacity(
    config: RunConfig, options: CapacityOptions, secrets: Secrets | None = None,
    progress: ProgressSink | None = None,
) -> CapacityAnswer:
    """Search the concurrency boundary and the agents, answer (written beside
    `config.out_dir`)."""
    started = time.monotonic()
    task = options.agent_task or AgentsLoad(agents=[1], seed=config.seed)
    task = task.model_copy(update={"duration_s": options.agents_duration_s})
    search = AgentCapacitySearch(
        options.slo(),
        ProbeSettings(options.confidence, options.first_look), options.search_budget_s(),
        task, options.max_agents, options.max_concurrency)
    watch = SearchWatch(progress or NullProgress(), search=search)
    out = Path(config.out_dir).parent
    try:
        run_benchmark(config, secrets, watch, plan=search)
    except KeyboardInterrupt:
        answer = agents_answer(config, options, search, watch, started)
        write_answer(out, answer.model_copy(update={"complete": False}))
        raise
    answer = price_answer(agents_answer(config, options, search, watch, started), config.cost)
    write_answer(out, answer)
    return answer


def agents_answer(
    config: RunConfig, options: CapacityOptions, search: AgentCapacitySearch,
    watch: SearchWatch, started: float,
) -> CapacityAnswer:
    """The answer from the levels measured so far: the concurrency phase's answer (C_max,
    its probes) with the agents' beside it."""
    base = search_answer(config, options, options.slo(), search.concurrency, watch, started)
    result = search.result()
    best, missed = search.probe(result.lower), search.probe(result.upper)
    level = best or _lowest(search)
    curve = [(p.concurrency, p.summary.latency_mean_s) for p in search.concurrency.probes
             if p.summary.latency_mean_s]
    prediction = (predict_from(level.summary, curve, base.c_max, search.slo)
                  if level is not None else None)
    scale = search.time_scale
    agents = AgentFields(
        agents_max=result.lower, first_miss=result.upper,
        binding=missed.verdict.reason if missed is not None else None,
        predicted_agents=prediction.agents if prediction else None,
        agents_per_stream=prediction.per_stream if prediction else None,
        predicted_streams=prediction.streams if prediction else None,
        predicted_bound=prediction.bound if prediction else None,
        task_time_slo_s=options.task_time_slo_s,
        task_time_s=_times(best.verdict.task_time_s, scale) if best is not None else None,
        tasks_per_s=_rate(best, scale), lowest=min((p.agents for p in search.probes),
                                                   default=None),
        max_agents=options.max_agents)
    return base.model_copy(update={
        "status": _status(result.status, result.lower, result.upper, missed),
        "load": "agents", "agents": agents,
        "probes": base.probes + [_row(p) for p in search.probes],
        "elapsed_s": time.monotonic() - started,
    })


def _lowest(search: AgentCapacitySearch) -> AgentMeasured | None:
    return min(search.probes, key=lambda p: p.agents, default=None)


def _times(value: float | None, scale: float) -> float | None:
    return value * scale if value is not None else None


def _rate(probe: AgentMeasured | None, scale: float) -> float | None:
    value = (probe.summary.kind_block or {}).get("tasks_per_s") if probe else None
    return float(value) / scale if value is not None else None


def _status(
    status: SearchStatus, lower: int | None, upper: int | None, missed: AgentMeasured | None,
) -> Status:
    if status is SearchStatus.NOTHING_PASSES:
        return "slo_missed_at_1"
    if missed is not None and missed.summary.client_bound:
        return "client_bound"
    return "found" if lower is not None and upper is not None else "not_bounded"


def _row(probe: AgentMeasured) -> ProbeRow:
    """An agents level as a probe row: judged on its whole tasks (on the server's clock, as
    the concurrency probes' rows are)."""
    verdict = probe.verdict
    return ProbeRow(
        concurrency=None, agents=probe.agents, n_requests=probe.summary.n_requests or 0,
        n_judged=verdict.tasks, cropped=0, verdict="pass" if verdict.passed else "fail",
        ttft_bound_ms=[None, None], tps_bound=[None, None],
        ttft_ms=verdict.ttft_ms,
        tps=None, reason="" if verdict.passed else verdict.reason,
        task_time_s=verdict.task_time_s,
    )
