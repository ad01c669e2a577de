"""`capacity.json`: the answer of `servecap capacity`, and the sentence that opens it.

The answer leads with one sentence (the deployment, the verified and predicted users, C_max
with its bracket, the binding SLO, and what it cost), then the probes. `status` is what the
exit code says: found; `slo_missed_at_1` (not even one stream met the SLOs);
`not_bounded` (the time budget ended before a miss bracketed C_max); `client_bound` (a
miss on a level where this client could not keep up: it may be the client's).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, computed_field

from servecap.core.config import SLO
from servecap.core.errors import DataFormatError
from servecap.stats.cost import RunCost
from servecap.storage.agents_answer import AgentFields, agents_sentence
from servecap.storage.rate_answer import RateFields, rate_sentence
from servecap.storage.safe_files import make_dir, read_text_file, write_atomic

Status = Literal["found", "slo_missed_at_1", "not_bounded", "client_bound"]
EXIT_CODES: dict[str, int] = {
    "found": 0, "slo_missed_at_1": 3, "not_bounded": 4, "client_bound": 5,
}
ANSWER_FILE = "capacity.json"


class ProbeRow(BaseModel):
    """One probe: its level, what it judged and its verdict with the bounds it rests on."""

    concurrency: int | None  # None on a rate probe
    n_requests: int
    n_judged: int
    cropped: int
    verdict: str
    ttft_bound_ms: list[float | None]  # [low, high] of the TTFT statistic
    tps_bound: list[float | None]
    ttft_ms: float | None  # the level's point value, as plan reads it
    tps: float | None
    reason: str = ""
    rate: float | None = None  # `--load rate`: the offered rate, requests/s on real time
    agents: int | None = None  # `--load agents`: an agents level's N
    task_time_s: float | None = None  # its task-time statistic, real time

    def level(self) -> str:
        """The probe's level as text: `c=4`, `rate=2.5/s` or `agents=8`."""
        if self.agents is not None:
            return f"agents={self.agents}"
        return f"c={self.concurrency}" if self.rate is None else f"rate={self.rate:g}/s"


class CapacityAnswer(BaseModel):
    """What `servecap capacity` found for one deployment."""

    deployment: str
    status: Status
    complete: bool = True
    slo: SLO
    confidence: float
    c_max: int | None
    first_miss: int | None
    binding_slo: str | None  # which SLO the first miss broke: "TTFT", "TPS" or both
    latency_mean_s: float | None  # at C_max, on the server's clock
    time_scale: float = 1.0  # a simulator's: its clock runs this many times real time
    predicted_users: int | None
    verified_users: int | None = None
    users_turns: str = "1"
    users_note: str | None = None
    requests: int
    elapsed_s: float
    probes: list[ProbeRow]
    diagnosis: str | None = None
    probe_run: str | None = None
    users_run: str | None = None
    max_concurrency: int | None = None  # the search's cap (absent in answers before it)
    # `--gpus`/`--gpu-hour-cost`: cost at C_max, the verified users and peak (`stats.cost`)
    cost: RunCost | None = None
    # `--load rate` (`storage.rate_answer`): the open-loop rate at the boundary instead
    load: Literal["concurrency", "rate", "agents"] = "concurrency"
    rate: RateFields | None = None
    # `--load agents` (`storage.agents_answer`): the concurrent agents within a task-time SLO
    agents: AgentFields | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def headline(self) -> str:
        """The sentence in the JSON too (`--format json`, `capacity.json`): a reader gets
        the answer without rebuilding it from the fields (ignored when read back)."""
        return self.sentence()

    def sentence(self) -> str:
        """The answer in one sentence."""
        if self.rate is not None:
            return rate_sentence(self, self.rate)
        if self.agents is not None:
            return agents_sentence(self, self.agents)
        cost = f"{self.requests} requests in {_minutes(self.elapsed_s)}"
        head = "" if self.complete else "INCOMPLETE (interrupted): "
        if self.status == "slo_missed_at_1":
            return (f"{head}{self.deployment}: no level meets the SLOs ({self._slos()}), "
                    f"not even c=1 ({cost}).")
        if self.c_max is None:
            return f"{head}{self.deployment}: no concurrency was bracketed ({cost})."
        users = (f"holds {self.verified_users} users verified "
                 f"(predicted {self.predicted_users})" if self.verified_users
                 else f"is predicted to hold {self.predicted_users} users (not verified)")
        bracket = (f"C_max {self.c_max}, first miss c={self.first_miss} on "
                   f"{self.binding_slo}" if self.first_miss is not None
                   else f"C_max >= {self.c_max}, {self._unbounded_why()}")
        scale = "" if self.time_scale == 1 else f"; simulator at x{self.time_scale:g}"
        note = f" Note: {self.users_note}." if self.users_note else ""
        return (f"{head}{self.deployment} {users} at think time {self.slo.think_time_s:g} s; "
                f"{bracket} ({self._slos()}; {cost}{scale}).{note}")

    def _unbounded_why(self) -> str:
        if self.max_concurrency is not None and (self.c_max or 0) >= self.max_concurrency:
            return "the highest concurrency the search may probe"
        return "not bounded within the budget"

    def _slos(self) -> str:
        stat = self.slo.statistic.upper()
        return f"{stat} TTFT <= {self.slo.ttft_ms:g} ms, {stat} TPS >= {self.slo.tps:g}"

    def exit_code(self) -> int:
        return EXIT_CODES[self.status]


def grid_equivalent(c_max: int | None) -> int | None:
    """The largest power of two at or below C_max: what a grid of c = 1, 2, 4, ... reads."""
    if not c_max:
        return None
    return 1 << (c_max.bit_length() - 1)


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def write_answer(out_dir: Path, answer: CapacityAnswer) -> Path:
    make_dir(out_dir)
    return write_atomic(out_dir / ANSWER_FILE, answer.model_dump_json(indent=2) + "\n")


def load_answer(out_dir: Path) -> CapacityAnswer | None:
    """`out_dir/capacity.json`, or None when there is none or it does not parse."""
    path = out_dir / ANSWER_FILE
    if not path.is_file():
        return None
    try:
        return CapacityAnswer.model_validate_json(read_text_file(path, "capacity answer"))
    except (ValueError, DataFormatError):
        return None


def answer_for(run_dir: Path) -> CapacityAnswer | None:
    """The capacity answer a run belongs to (its probes or its users), if any: capacity
    writes its runs to OUT/runs/ and the answer to OUT/capacity.json."""
    answer = load_answer(run_dir.parent.parent)
    if answer is None:
        return None
    mine = {Path(p).name for p in (answer.probe_run, answer.users_run) if p}
    return answer if run_dir.name in mine else None
