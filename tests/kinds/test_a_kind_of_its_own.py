"""A kind the code has never seen, registered inside the test, runs through a whole run,
its stored files, a plan and a report: nothing outside its module needs to know it."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from servecap.api.run.run import run_benchmark_async
from servecap.api.run.run_config import RunConfig
from servecap.api.stored.plan import plan_runs
from servecap.api.stored.report import build_report
from servecap.core.config import SLO, ClientOptions
from servecap.core.level_key import LevelKey
from servecap.kinds.base import KindText, LevelSpec, LoadKind, LoadPlan, Share
from servecap.kinds.io import LevelIO
from servecap.kinds.on_time import send_at_targets
from servecap.kinds.planned import deal_targets
from servecap.kinds.registry import KINDS, load_from_text
from servecap.storage.run_dir import SUMMARY_JSON
from servecap.storage.runs import load_run
from servecap.workload.source import RequestSource
from tests.servers.schedule_server import Schedule, ServerThread, make_app

FAST = Schedule(ttft_s=0.01, chunk_interval_s=0.002)


@dataclass(frozen=True, slots=True, kw_only=True)
class BurstLevel(LevelSpec):
    """All of a level's requests at once, at its start."""

    WIRE = "BurstLevel"

    def demand(self) -> int:
        return self.n_requests

    def split(self, workers: int, source: RequestSource | None = None) -> list[Share]:
        return deal_targets(self, [(i, 0) for i in range(self.n_requests)], workers)

    async def run(self, io: LevelIO) -> None:
        timed = ((i, 0, io.source.next_request()) for i in range(self.n_requests))
        await send_at_targets(self, io, timed)


class BurstLoad(LoadPlan):
    kind: Literal["burst"] = "burst"
    sizes: list[int]

    def levels(self) -> list[BurstLevel]:
        return [BurstLevel(key=KIND.key(n), n_requests=n) for n in self.sizes]

    def max_in_flight(self) -> int:
        return max(self.sizes)

    @classmethod
    def from_text(cls, spec: str, seed: int) -> BurstLoad:
        return cls(sizes=[int(n) for n in spec.split(",")])


class BurstKind(LoadKind):
    def users_at(self, key: LevelKey, latency_mean_s: float, think_time_s: float) -> int:
        return 7 * int(key.value)  # any rule of the kind's own: the plan must ask it

    def capacity_fields(self, key: LevelKey) -> dict[str, Any]:
        return {"c_max": int(key.value)}


KIND = BurstKind(
    "burst",
    KindText(prefix="burst", unit="", quantity="burst size", axis_title="burst (requests)",
             mode="bursts", methodology="bursts: each level's requests all at once",
             example="burst=1,3"),
    BurstLoad,
    [BurstLevel],
)


@pytest.fixture
def burst_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(KINDS, "burst", KIND)


def test_a_kind_registered_here_runs_stores_plans_and_reports(
    burst_kind: None, tmp_path: Path
) -> None:
    load = load_from_text("burst=1,3")
    config = RunConfig(output_tokens=4, out_dir=str(tmp_path), load=load, warmup=0,
                       client=ClientOptions(base_url="http://127.0.0.1:1/v1"))
    with ServerThread(make_app(FAST)) as server:
        config = config.model_copy(update={"client": ClientOptions(base_url=server.base_url)})
        outcome = asyncio.run(run_benchmark_async(config))
    assert [str(lv.key) for lv in outcome.levels] == ["burst=1", "burst=3"]
    assert [lv.n_ok for lv in outcome.levels] == [1, 3]
    # a burst is sent at target times: its lateness columns are there
    assert all(lv.send_lateness_max_ms is not None for lv in outcome.levels)
    stored = json.loads((outcome.run_dir / "run.json").read_text())
    assert stored["config"]["load"] == {"kind": "burst", "sizes": [1, 3]}

    (outcome.run_dir / SUMMARY_JSON).unlink()  # recomputed from requests.jsonl
    again = load_run(outcome.run_dir)
    assert [(str(lv.key), lv.n_ok) for lv in again.levels] == [("burst=1", 1), ("burst=3", 3)]
    plan = plan_runs([again], SLO(ttft_ms=10_000, tps=0)).runs[0]
    assert (plan.c_max, plan.users) == (3, 21)  # the kind's own fields and users rule
    model = build_report([again])
    assert dict(model.methodology)["Load model"] == "bursts: each level's requests all at once"
    assert dict(model.methodology)["Burst size levels"] == "1, 3"
