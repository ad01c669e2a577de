"""`servecap capacity`: the SLO boundary searched, then the users it implies verified, in one run.

1. The search (`search_plan`): closed probes from c=1, doubling, then bisection, each probe
   stopping once its verdict is decided (`probe_rule`). Every probe is a level of one run
   directory, so `plan`, `show`, `report` and the app read it like any run.
2. The users: N = C_max x (1 + Z / L) by Little's law, from the search's own C_max and the
   mean latency at it; N users run with the think time (`api.predict.verify`), each user's
   conversation by default one request of the search's shape, as the prediction assumes;
   below N on a miss.
3. The answer (`answer`): one sentence first, the probes, the failures diagnosed; written to
   `capacity.json` beside the runs. An interrupt writes what was measured, marked incomplete.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from servecap.api.capacity.cost import price_answer
from servecap.api.capacity.diagnosis import diagnose
from servecap.api.capacity.probe_rule import ProbeSettings
from servecap.api.capacity.rate_search import DEFAULT_RESOLUTION
from servecap.api.capacity.search_plan import CapacitySearch, MeasuredProbe
from servecap.api.predict.verify import VerifyOptions, verify_users
from servecap.api.run.progress import NullProgress, ProgressSink
from servecap.api.run.run import Secrets, run_benchmark
from servecap.api.run.run_config import RunConfig
from servecap.core.config import SLO, Statistic
from servecap.core.errors import UserInputError
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary
from servecap.kinds.agents import AgentsLoad
from servecap.stats.capacity import users_by_littles_law
from servecap.stats.search import SearchStatus
from servecap.storage.capacity_answer import CapacityAnswer, ProbeRow, Status, write_answer
from servecap.storage.run_dir import REQUESTS_FILE, iter_records, load_run_info
from servecap.storage.runs import load_run
from servecap.workload.think_time import parse_think_time, parse_turns

USERS_RESERVE_S = 30.0  # the users level's ramp and drain, beyond its duration
MIN_SEARCH_S = 30.0
SLO_DEFAULTS = SLO()


class CapacityOptions(BaseModel):
    """What `servecap capacity` searches for and how much it may spend."""

    ttft_slo_ms: float = Field(default=SLO_DEFAULTS.ttft_ms, gt=0, allow_inf_nan=False)
    tps_slo: float = Field(default=SLO_DEFAULTS.tps, ge=0, allow_inf_nan=False)
    statistic: Statistic = SLO_DEFAULTS.statistic
    think: str = f"exp:{SLO_DEFAULTS.think_time_s:g}"  # the SLO's mean, exponential
    confidence: float = Field(default=0.95, gt=0.5, lt=1.0)
    first_look: int = Field(default=60, ge=10, le=100_000)
    max_concurrency: int = Field(default=1024, ge=1, le=100_000)
    verify: bool = True
    users_turns: str = "1"
    users_duration_s: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    # `--load rate` (`rate_capacity`): open-loop rates from `start_rate` (requests/s on
    # real time), bisected until the bracket is within `rate_resolution` of its pass
    load: Literal["concurrency", "rate", "agents"] = "concurrency"
    start_rate: float = Field(default=1.0, gt=0, allow_inf_nan=False)
    rate_resolution: float = Field(default=DEFAULT_RESOLUTION, gt=0, lt=1, allow_inf_nan=False)
    # `--load agents` (`agents_capacity`): levels of N agents running `agent_task`'s tasks
    # for `agents_duration_s` each, judged on the task time's statistic and per-call TTFT
    task_time_slo_s: float = Field(default=60.0, gt=0, allow_inf_nan=False)
    max_agents: int = Field(default=256, ge=1, le=100_000)
    agents_duration_s: float = Field(default=120.0, gt=0, allow_inf_nan=False)
    agent_task: AgentsLoad | None = None  # None: the agents' defaults
    # after the users' fields: its check reads them
    max_time_s: float = Field(default=900.0, gt=0, allow_inf_nan=False)

    @field_validator("think")
    @classmethod
    def _check_think(cls, value: str) -> str:
        return str(_parsed(parse_think_time, value))

    @field_validator("users_turns")
    @classmethod
    def _check_turns(cls, value: str) -> str:
        return str(_parsed(parse_turns, value))

    @field_validator("max_time_s")
    @classmethod
    def _leaves_time_to_search(cls, value: float, info: ValidationInfo) -> float:
        # the agents' answer is its own search's level: no users level to reserve time for
        verify = info.data.get("verify") and info.data.get("load") != "agents"
        users = info.data.get("users_duration_s", 0.0) if verify else 0.0
        reserve = users + USERS_RESERVE_S if users else 0.0
        if value - reserve < MIN_SEARCH_S:
            raise ValueError(f"{value:g} s leaves no time for the search: give at least "
                             f"{reserve + MIN_SEARCH_S:g} s")
        return value

    def slo(self) -> SLO:
        think = parse_think_time(self.think, "think_time")
        return SLO(ttft_ms=self.ttft_slo_ms, tps=self.tps_slo, statistic=self.statistic,
                   think_time_s=think.mean_s, task_time_s=self.task_time_slo_s)

    def search_budget_s(self) -> float:
        """The time the search may take: the rest is the users'."""
        verify = self.verify and self.load != "agents"
        reserve = self.users_duration_s + USERS_RESERVE_S if verify else 0.0
        return self.max_time_s - reserve


def _parsed(parse: Callable[[str], object], value: str) -> object:
    """A workload parser's UserInputError as the ValueError a pydantic field reports."""
    try:
        return parse(value)
    except UserInputError as exc:
        raise ValueError(str(exc)) from None


class ServerClocked(Protocol):
    """A search that judges on the server's clock (a simulator's time scale)."""

    def use_clock(self, time_scale: float) -> None: ...


@dataclass
class _Watch(NullProgress):
    """Forwards progress and remembers the run directory the engine opened."""

    inner: ProgressSink
    search: ServerClocked | None = None
    run_dir: str | None = None
    records: list[RequestRecord] = field(default_factory=list)

    def started(self, total_requests: int, run_dir: str, model: str) -> None:
        """The engine has checked the server: judge on its clock (a simulator's scale)."""
        self.run_dir = run_dir
        if self.search is not None:
            self.search.use_clock(load_run_info(Path(run_dir)).time_scale or 1.0)
        self.inner.started(total_requests, run_dir, model)

    def level_started(self, level: LevelKey, n_requests: int) -> None:
        self.inner.level_started(level, n_requests)

    def request_done(self, record: RequestRecord) -> None:
        self.records.append(record)
        self.inner.request_done(record)

    def level_done(self, summary: LevelSummary) -> None:
        self.inner.level_done(summary)


def find_concurrency_capacity(
    config: RunConfig, options: CapacityOptions, secrets: Secrets | None = None,
    progress: ProgressSink | None = None,
) -> CapacityAnswer:
    """Search the concurrency, verify, answer; `config` gives the server and request shape,
    and its `out_dir` the folder the runs go to; the answer is written beside that folder.
    (`api.capacity.by_load.find_capacity` picks this, the rate's or the agents' search.)"""
    slo = options.slo()
    started = time.monotonic()
    settings = ProbeSettings(options.confidence, options.first_look)
    search = CapacitySearch(slo, settings, options.search_budget_s(), options.max_concurrency)
    watch = _Watch(progress or NullProgress(), search)
    out = Path(config.out_dir).parent
    try:
        run_benchmark(config, secrets, watch, plan=search)
    except KeyboardInterrupt:
        _write_partial(out, config, options, slo, search, watch, started)
        raise
    answer = _answer(config, options, slo, search, watch, started)
    if options.verify:
        answer = verify_answer(answer, options, secrets, progress)
    answer = price_answer(answer, config.cost)
    write_answer(out, answer)
    return answer


def verify_answer(
    answer: CapacityAnswer, options: CapacityOptions, secrets: Secrets | None = None,
    progress: ProgressSink | None = None,
) -> CapacityAnswer:
    """The answer with its users run (its server must still be up); as it was when the
    search bracketed nothing to predict from."""
    if not (answer.c_max and answer.latency_mean_s and answer.probe_run):
        return answer
    started = time.monotonic() - answer.elapsed_s
    probe_run = Path(answer.probe_run)
    users = _users_options(options, probe_run.parent, answer.time_scale)
    return _verified(answer, users, probe_run, secrets, progress, started)


def _write_partial(
    out: Path, config: RunConfig, options: CapacityOptions, slo: SLO, search: CapacitySearch,
    watch: _Watch, started: float,
) -> None:
    answer = _answer(config, options, slo, search, watch, started)
    write_answer(out, answer.model_copy(update={"complete": False}))


def _answer(
    config: RunConfig, options: CapacityOptions, slo: SLO, search: CapacitySearch,
    watch: _Watch, started: float,
) -> CapacityAnswer:
    result = search.result()
    c_max = result.lower if result.lower is not None and result.lower >= 1 else None
    at_max = _probe(search.probes, c_max)
    latency = at_max.summary.latency_mean_s if at_max is not None else None
    first_miss = result.upper
    predicted = (users_by_littles_law(c_max, latency, search.slo.think_time_s)
                 if c_max is not None and latency else None)
    return CapacityAnswer(
        deployment=config.name or config.model or "server",
        status=_status(search, c_max, first_miss),
        slo=slo, confidence=options.confidence, c_max=c_max, first_miss=first_miss,
        binding_slo=_binding(_probe(search.probes, first_miss)),
        latency_mean_s=latency, predicted_users=predicted, time_scale=search.time_scale,
        users_turns=options.users_turns, requests=len(watch.records),
        elapsed_s=time.monotonic() - started,
        probes=[_row(p) for p in search.probes],
        diagnosis=diagnose(watch.records), probe_run=watch.run_dir,
        max_concurrency=options.max_concurrency,
    )


def _status(search: CapacitySearch, c_max: int | None, first_miss: int | None) -> Status:
    result = search.result()
    if result.status is SearchStatus.NOTHING_PASSES:
        return "slo_missed_at_1"
    missed = _probe(search.probes, first_miss)
    if missed is not None and missed.summary.client_bound:
        return "client_bound"
    if c_max is None or first_miss is None:
        return "not_bounded"
    return "found"


def _probe(probes: list[MeasuredProbe], concurrency: int | None) -> MeasuredProbe | None:
    return next((p for p in reversed(probes) if p.concurrency == concurrency), None)


def _binding(missed: MeasuredProbe | None) -> str | None:
    return missed.outcome.binding() if missed is not None else None


def _row(probe: MeasuredProbe) -> ProbeRow:
    bounds = {j.threshold.metric: [j.low, j.high] for j in probe.outcome.judged}
    stat = "p90"
    summary = probe.summary
    if probe.outcome.judged:
        stat = probe.outcome.judged[0].threshold.statistic
    return ProbeRow(
        concurrency=probe.concurrency, n_requests=summary.n_requests or 0,
        n_judged=probe.outcome.n_judged, cropped=probe.outcome.cropped,
        verdict=probe.outcome.verdict, ttft_bound_ms=bounds.get("ttft", [None, None]),
        tps_bound=bounds.get("tps", [None, None]), ttft_ms=summary.value("ttft", stat),
        tps=summary.value("tps", stat), reason=probe.outcome.reason,
    )


def _users_options(options: CapacityOptions, out_dir: Path, scale: float) -> VerifyOptions:
    """The users level on the server's clock (see `CapacitySearch.use_clock`); below the
    predicted N on a miss, in steps of 1/1.25 and bisection to within 10%."""
    think = parse_think_time(options.think, "think_time").scaled(1.0 / scale)
    return VerifyOptions(
        statistic=options.statistic, ttft_slo_ms=options.ttft_slo_ms / scale,
        tps_slo=options.tps_slo * scale, think=str(think), turns=options.users_turns,
        duration_s=options.users_duration_s / scale, search_on_miss=True, factor=1.25,
        tolerance=0.1, budget=4, out_dir=str(out_dir),
    )


def _verified(
    answer: CapacityAnswer, verify: VerifyOptions, probe_run: Path,
    secrets: Secrets | None, progress: ProgressSink | None, started: float,
    in_flight: int | None = None,
) -> CapacityAnswer:
    """Run the predicted users (and below them on a miss) against the same server; the
    prediction's streams in flight are C_max unless given (a rate answer's X x R)."""
    streams = answer.c_max if in_flight is None else in_flight
    assert streams is not None and answer.latency_mean_s is not None
    assert answer.predicted_users is not None
    prediction = (streams, answer.latency_mean_s, answer.predicted_users)
    watch = _Watch(progress or NullProgress())
    result, outcome = verify_users(load_run(probe_run), verify, prediction, secrets, watch)
    records = list(iter_records(outcome.run_dir / REQUESTS_FILE))
    note = None if verify.turns == "1" else f"users held {verify.turns} turns"
    if any(level.client_bound for level in outcome.levels):
        note = ", ".join(filter(None, [note, "this client could not keep up with a users "
                                       "level: the verified count may be the client's"]))
    return answer.model_copy(update={
        "verified_users": result.verified_users, "users_run": str(outcome.run_dir),
        "requests": answer.requests + len(records), "users_note": note,
        "elapsed_s": time.monotonic() - started,
        "diagnosis": answer.diagnosis or diagnose(records),
    })


# Several targets probed in turn (`api.capacity.targets`) run each target's search through
# the same progress watch and answer it the same way.
SearchWatch = _Watch
search_answer = _answer
