"""`run_lockstep`: each target's client in its own process, driven slot by slot (127.0.0.1).

Lock-step: the targets of one (repeat, level) run at the same moments; interleaved: one slot
at a time, in `load.interleave`'s order. Both keep `comparison.json` as `servecap compare`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servecap.api.comparison.config import CompareConfig
from servecap.api.comparison.lockstep import run_lockstep
from servecap.api.comparison.run import servers
from servecap.api.comparison.targets import build_targets
from servecap.api.run.run_config import RunConfig
from servecap.core.errors import UserInputError

pytestmark = pytest.mark.timeout(180)


def _config(out: Path, specs: list[str], repeats: int = 2) -> CompareConfig:
    workload = RunConfig(concurrency=[1, 2], rounds=2, output_tokens=8, out_dir=str(out))
    return CompareConfig(build_targets(specs), workload, repeats)


def _spans(comp: Path, data: dict) -> dict[tuple[str, str, int], tuple[int, int]]:
    """Each slot's first send and last end on the wall clock (each run's own anchor)."""
    out = {}
    for target in data["targets"]:
        run = comp / target["run_dir"]
        info = json.loads((run / "run.json").read_text())
        shift = info["anchor_wall_ns"] - info["anchor_perf_ns"]
        rows = {r["request_id"]: r for r in map(json.loads, (run / "requests.jsonl").open())}
        for slot in (s for s in data["slots"] if s["target"] == target["name"]):
            ids = range(slot["first_id"], slot["last_id"] + 1)
            out[(slot["target"], slot["level"], slot["repeat"])] = (
                min(rows[i]["sent_at"] for i in ids) + shift,
                max(rows[i]["ended_at"] for i in ids) + shift,
            )
    return out


def _run(tmp_path: Path, schedule: str) -> tuple[Path, dict]:
    config = _config(tmp_path, ["a=sim:deterministic*2", "b=sim:deterministic"])
    with servers(config.targets) as urls:
        outcome = run_lockstep(config, urls, schedule=schedule)  # type: ignore[arg-type]
    return outcome.path, json.loads((outcome.path / "comparison.json").read_text())


@pytest.mark.slow
def test_lockstep_runs_each_level_on_every_target_at_once(tmp_path: Path) -> None:
    comp, data = _run(tmp_path, "lockstep")
    assert data["status"] == "complete" and data["schedule"] == "lockstep"
    assert len(data["slots"]) == 2 * 2 * 2
    assert [s["position"] for s in data["slots"]] == list(range(8))
    spans = _spans(comp, data)
    for level in ("c=1", "c=2"):
        for repeat in (0, 1):
            a, b = spans[("a", level, repeat)], spans[("b", level, repeat)]
            assert a[0] < b[1] and b[0] < a[1], (level, repeat)  # they overlap in time
    (head,) = data["headlines"]
    assert "more than a" in head["sentences"][0]  # b, twice as fast, holds more users
    summary = json.loads((comp / data["targets"][0]["run_dir"] / "summary.json").read_text())
    assert [row["n_requests"] for row in summary] == [4, 8]  # repeats pooled


@pytest.mark.slow
def test_interleaved_schedule_runs_one_slot_at_a_time(tmp_path: Path) -> None:
    comp, data = _run(tmp_path, "interleaved")
    assert data["status"] == "complete" and data["schedule"] == "interleaved"
    spans = sorted(_spans(comp, data).values())
    assert all(earlier[1] <= later[0] for earlier, later in zip(spans, spans[1:]))


@pytest.mark.slow
def test_different_models_are_refused_before_any_load(tmp_path: Path) -> None:
    config = _config(tmp_path / "out", ["a=sim:deterministic", "b=sim:vllm-direct"], 1)
    with servers(config.targets) as urls, pytest.raises(UserInputError,
                                                        match="allow different models"):
        run_lockstep(config, urls)
    assert not any((tmp_path / "out").glob("compare-*"))


def test_the_demo_pairs_and_winner() -> None:
    from servecap.api.demo import VERIFY_S, _pairs, _winner
    from servecap.api.stored.plan import CapacityReport, RunCapacity
    from servecap.cli.demo_cmd import VERIFY_S as CLI_VERIFY_S
    from servecap.core.config import SLO

    assert CLI_VERIFY_S == VERIFY_S
    assert _pairs(("vllm-direct", "vllm-spec")) == [("vllm-direct", "vllm-spec")]
    runs = [RunCapacity(name=n, c_max=c, latency_mean_s=1.0, users=u, levels=[])
            for n, c, u in (("a", 32, 266), ("b", 16, 297), ("c", None, None))]
    assert _winner(CapacityReport(slo=SLO(), runs=runs)) == "b"  # users, not streams
