"""Whole runs through the load plan: the `fixed` kind end to end (run, files, recompute, plan,
report), summaries on disk after every level, and warm-up rows that never form a level."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path
from typing import Any

from servecap.api.run.progress import NullProgress
from servecap.api.run.run import RunOutcome, run_benchmark_async
from servecap.api.run.run_config import RunConfig
from servecap.api.stored.plan import plan_runs
from servecap.api.stored.report import build_report
from servecap.core.config import SLO, ClientOptions
from servecap.core.level_key import LevelKey
from servecap.kinds.fixed import FixedLoad
from servecap.report.charts_spec import all_charts
from servecap.storage.run_dir import SUMMARY_CSV, SUMMARY_JSON
from servecap.storage.runs import load_run
from tests.servers.schedule_server import Schedule, ServerThread, make_app

FAST = Schedule(ttft_s=0.01, chunk_interval_s=0.002)


def _run(base_url: str, out: Path, progress: Any = None, **kw: Any) -> RunOutcome:
    config = RunConfig(
        output_tokens=4, out_dir=str(out), client=ClientOptions(base_url=base_url), **kw
    )
    return asyncio.run(run_benchmark_async(config, progress=progress))


def test_a_whole_run_through_the_fixed_scheduler(tmp_path: Path) -> None:
    load = FixedLoad(schedules=[[0.0, 0.02, 0.04], [0.0, 0.01]])
    with ServerThread(make_app(FAST)) as server:
        outcome = _run(server.base_url, tmp_path, load=load, warmup=1)
    fixed1, fixed2 = LevelKey("fixed", 1), LevelKey("fixed", 2)
    assert [lv.key for lv in outcome.levels] == [fixed1, fixed2]
    assert [lv.n_ok for lv in outcome.levels] == [3, 2] and outcome.info.status == "complete"
    run_dir = outcome.run_dir
    rows = [json.loads(line) for line in (run_dir / "requests.jsonl").read_text().splitlines()]
    assert rows[0]["warmup"] and rows[0]["concurrency"] == 1 and "level" not in rows[0]
    assert sorted(r["level"] for r in rows[1:]) == ["fixed=1"] * 3 + ["fixed=2"] * 2
    stored = json.loads((run_dir / SUMMARY_JSON).read_text())
    assert [s["level"] for s in stored] == ["fixed=1", "fixed=2"]
    assert all("concurrency" not in s for s in stored)
    with (run_dir / SUMMARY_CSV).open() as handle:
        assert [r["level"] for r in csv.DictReader(handle)] == ["fixed=1", "fixed=2"]
    info = json.loads((run_dir / "run.json").read_text())
    assert set(info["client_health"]) == {"fixed=1", "fixed=2"}
    assert info["config"]["load"]["kind"] == "fixed" and info["closed_loop"] is False

    (run_dir / SUMMARY_JSON).unlink()
    again = load_run(run_dir)
    assert [(lv.key, lv.n_ok) for lv in again.levels] == [(fixed1, 3), (fixed2, 2)]
    assert again.levels[0].client_cpu_pct == outcome.levels[0].client_cpu_pct

    plan = plan_runs([again], SLO()).runs[0]
    assert plan.c_max is None  # C_max is a closed loop's; no user count without a formula
    assert [lv["level"] for lv in plan.levels] == ["fixed=1", "fixed=2"]
    model = build_report([again])
    assert dict(model.methodology)["Load model"].startswith("fixed schedule")
    by_level = [c for c in all_charts(model) if c.kind == "lines" and c.x_title != "tokens"]
    assert {c.x_title for c in by_level} == {"fixed schedule (level)"}
    lengths = [c for c in all_charts(model) if c.x_title == "tokens"]  # histograms of lengths
    assert [c.info.slug for c in lengths] == ["input-lengths", "output-lengths"]


class SummariesOnDisk(NullProgress):
    """Reads summary.json from disk whenever a level starts."""

    def __init__(self) -> None:
        self.run_dir: Path | None = None
        self.seen: list[list[int]] = []

    def started(self, total_requests: int, run_dir: str, model: str) -> None:
        self.run_dir = Path(run_dir)

    def level_started(self, level: LevelKey, n_requests: int) -> None:
        assert self.run_dir is not None
        path = self.run_dir / SUMMARY_JSON
        levels = json.loads(path.read_text()) if path.is_file() else []
        self.seen.append([lv["concurrency"] for lv in levels])


def test_summaries_are_on_disk_after_every_level(tmp_path: Path) -> None:
    probe = SummariesOnDisk()
    with ServerThread(make_app(FAST)) as server:
        _run(server.base_url, tmp_path, progress=probe, concurrency=[1, 2, 4], rounds=2)
    # A run killed in any level keeps the summaries of every level before it.
    assert probe.seen == [[], [1], [1, 2]]


def test_a_killed_run_recomputed_plans_like_the_same_run_with_its_summary(
    tmp_path: Path,
) -> None:
    with ServerThread(make_app(FAST)) as server:
        outcome = _run(server.base_url, tmp_path, concurrency=[2, 4], rounds=2, warmup=1)
    with_summary = plan_runs([load_run(outcome.run_dir)], SLO()).runs[0]
    (outcome.run_dir / SUMMARY_JSON).unlink()  # as SIGKILL leaves it
    recomputed = load_run(outcome.run_dir)
    assert [lv.concurrency for lv in recomputed.levels] == [2, 4]  # no level from warm-up
    from_rows = plan_runs([recomputed], SLO()).runs[0]
    assert with_summary.c_max == 4 and from_rows.c_max == with_summary.c_max
    assert from_rows.users == with_summary.users and from_rows.levels == with_summary.levels
