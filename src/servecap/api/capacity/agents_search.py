"""`servecap capacity --load agents`: the search for the concurrent agents a server holds.

Two phases in one run plan, each probe a level of the run directory:

1. The concurrency boundary (`search_plan.CapacitySearch`, its own share of the budget):
   closed probes judged on the per-call SLOs give C_max, the streams the server holds.
2. The agents: levels of N agents (`kinds.agents`), from N = C_max (1 without one), doubling
   until a level misses (halving until one passes), then bisected to the integer
   (`stats.search.BoundarySearch`). Starting at C_max rather than 1 spares the levels of a
   few agents, which finish too few tasks in a duration to judge a task-time statistic
   (an agent spends most of its time on tools and idle, so C_max agents is a low guess).
   A level runs for its duration and is judged once it ends (`kinds.agents_verdict`):
   the task-time statistic within the task-time SLO and the per-call TTFT statistic
   within the TTFT SLO, as point values over the level's tasks.

The verified answer is the largest N whose level met both; the prediction, C_max x the
agents one stream holds at the highest passing level (`agents_per_stream`, Little's law on
the server), is what the concurrency boundary alone would have said.
Times: the simulator at time scale S answers S times faster, so its agents' tool latency,
idle and duration are divided by S, and so are the SLOs they are judged on.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from servecap.api.capacity.probe_rule import ProbeSettings
from servecap.api.capacity.search_plan import CapacitySearch
from servecap.api.run.plans import Step, Steps
from servecap.core.config import SLO, on_clock
from servecap.core.summary import LevelSummary
from servecap.kinds.agents import AgentsLevel, AgentsLoad
from servecap.kinds.agents_verdict import AgentVerdict, judge_level
from servecap.stats.search import BoundarySearch, SearchResult
from servecap.workload.think_time import parse_think_time

MAX_AGENT_PROBES = 24
# The share of the budget the concurrency phase may spend before the agents' probes.
CONCURRENCY_SHARE = 0.4


@dataclass
class AgentMeasured:
    """One agents level: its N, its verdict and its summary."""

    agents: int
    verdict: AgentVerdict
    summary: LevelSummary

    def agents_per_stream(self) -> float | None:
        value = (self.summary.kind_block or {}).get("agents_per_stream")
        return float(value) if value is not None else None


@dataclass
class AgentCapacitySearch:
    """The two phases' plan (see the module); `probes` fills as the engine measures them."""

    slo: SLO  # the per-call and task-time SLOs (real time until `use_clock`)
    settings: ProbeSettings
    budget_s: float
    task: AgentsLoad  # the agents' task shape and duration, on real time
    max_agents: int = 256
    max_concurrency: int = 1024
    probes: list[AgentMeasured] = field(default_factory=list)
    out_of_time: bool = False
    time_scale: float = 1.0
    search: BoundarySearch = field(init=False)
    concurrency: CapacitySearch = field(init=False)

    def __post_init__(self) -> None:
        self.search = BoundarySearch(start=1, budget=MAX_AGENT_PROBES, minimum=1,
                                     maximum=self.max_agents)
        self.concurrency = CapacitySearch(self.slo, self.settings,
                                          self.budget_s * CONCURRENCY_SHARE,
                                          self.max_concurrency)

    def use_clock(self, time_scale: float) -> None:
        """Judge and run on the server's clock (see the module)."""
        self.time_scale = time_scale
        self.slo = on_clock(self.slo, time_scale)
        self.concurrency.use_clock(time_scale)

    def max_in_flight(self) -> int:
        return max(self.max_concurrency, self.max_agents)

    def expected_requests(self) -> int:
        return self.settings.cap()

    def known_levels(self) -> None:
        return None

    def probe_level(self, agents: int) -> AgentsLevel:
        """N agents with the task's times on the server's clock."""
        scale = 1.0 / self.time_scale
        task = self.task.model_copy(update={
            "agents": [agents], "ramp_s": self.task.ramp_s * scale,
            "duration_s": self.task.duration_s * scale,
            "tool_latency": _scaled(self.task.tool_latency, scale),
            "idle": _scaled(self.task.idle, scale),
        })
        return task.levels()[0]

    def steps(self) -> Steps:
        deadline = time.monotonic() + self.budget_s
        yield from self.concurrency.steps()
        start = min(self.concurrency.result().lower or 1, self.max_agents)
        self.search = BoundarySearch(start=max(1, start), budget=MAX_AGENT_PROBES, minimum=1,
                                     maximum=self.max_agents)
        while (agents := self.search.next_probe()) is not None:
            if time.monotonic() >= deadline:
                self.out_of_time = True
                return
            summary = yield Step(self.probe_level(agents))
            if summary is None:
                return  # stopped: the level recorded nothing
            verdict = judge_level(summary, self.slo)
            self.probes.append(AgentMeasured(agents, verdict, summary))
            self.search.record(agents, verdict.passed)

    def result(self) -> SearchResult:
        return self.search.result()

    def probe(self, agents: int | None) -> AgentMeasured | None:
        return next((p for p in reversed(self.probes) if p.agents == agents), None)


def _scaled(spec: str, factor: float) -> str:
    """A time spec with every time multiplied by `factor` (`workload.think_time`)."""
    return str(parse_think_time(spec, "think_time").scaled(factor))
