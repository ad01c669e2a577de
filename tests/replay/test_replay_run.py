"""A short replay end to end against the deterministic simulator (in a thread, 127.0.0.1):
the levels per speed, each row's target, lengths sent and served, and a run that reads
back, plans and reports; plus the per-level length and lateness columns from records."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from servecap.api.run.run import run_benchmark_async
from servecap.api.run.run_config import RunConfig
from servecap.api.stored.plan import plan_runs
from servecap.api.stored.report import build_report
from servecap.core.config import SLO, ClientOptions
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.workload_spec import WorkloadSpec
from servecap.kinds.registry import KINDS
from servecap.kinds.replay import ReplayLoad
from servecap.metrics.lengths import lateness_fields, length_fields
from servecap.sim import load_profile, start_server_in_thread
from servecap.storage.runs import load_run

TRACE = """TIMESTAMP,ContextTokens,GeneratedTokens
2023-11-16 18:15:46.0000000,40,3
2023-11-16 18:15:46.1000000,80,5
2023-11-16 18:15:46.2500000,20,2
2023-11-16 18:15:46.3000000,60,4
"""


@pytest.mark.slow
def test_a_replay_sends_each_row_at_its_offset_with_its_lengths(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    trace.write_text(TRACE)
    load = ReplayLoad(trace=str(trace), speeds=[1, 2], rows=4)
    with start_server_in_thread(load_profile("deterministic")) as sim:
        config = RunConfig(out_dir=str(tmp_path / "out"), warmup=0, load=load,
                           client=ClientOptions(base_url=sim.base_url))
        outcome = asyncio.run(run_benchmark_async(config))
    keys = [lv.key for lv in outcome.levels]
    assert keys == [LevelKey("speed", 1, "x"), LevelKey("speed", 2, "x")]
    run = load_run(outcome.run_dir)
    for level in run.levels:
        assert level.n_ok == 4
        assert level.completion_tokens_mean == pytest.approx(14 / 4)
        assert level.input_tokens_sent_mean == pytest.approx(50.0)
        assert level.send_lateness_max_ms is not None
    rows = [r for r in outcome_records(outcome.run_dir) if r.level == "speed=2x"]
    rows.sort(key=lambda r: r.stream_index)
    offsets = [(r.scheduled_at - rows[0].scheduled_at) / 1e9 for r in rows]
    assert offsets == pytest.approx([0, 0.05, 0.125, 0.15], abs=1e-6)
    assert [r.max_tokens_sent for r in rows] == [3, 5, 2, 4]
    assert [r.completion_tokens for r in rows] == [3, 5, 2, 4]
    assert [r.prompt_tokens for r in rows] == [40, 80, 20, 60]
    assert run.info.config["load"]["kind"] == "replay"
    plan = plan_runs([run], SLO()).runs[0]
    assert [lv["level"] for lv in plan.levels] == ["speed=1x", "speed=2x"]
    model = build_report([run])
    assert dict(model.methodology)["Load model"].startswith("trace replay")


def outcome_records(run_dir: Path) -> list[RequestRecord]:
    import json

    lines = (run_dir / "requests.jsonl").read_text().splitlines()
    return [RequestRecord.from_dict(json.loads(line)) for line in lines]


def test_shared_prefixes_reach_the_simulator_as_a_system_message(tmp_path: Path) -> None:
    workload = WorkloadSpec(input_tokens="uniform:8:16", prefix_tokens=32, prefix_groups=2)
    with start_server_in_thread(load_profile("deterministic")) as sim:
        config = RunConfig(out_dir=str(tmp_path), warmup=0, concurrency=[2], rounds=2,
                           output_tokens=3, workload=workload,
                           client=ClientOptions(base_url=sim.base_url))
        outcome = asyncio.run(run_benchmark_async(config))
    (level,) = outcome.levels
    assert level.n_ok == 4
    records = outcome_records(outcome.run_dir)
    # served prompt = the 32-token system prompt plus 8..16 tokens of its own
    assert all(r.prompt_tokens == r.input_tokens_sent for r in records)
    assert all(40 <= (r.prompt_tokens or 0) <= 48 for r in records)
    assert run_config(outcome.run_dir)["workload"]["prefix_tokens"] == 32


def run_config(run_dir: Path) -> dict:
    import json

    return json.loads((run_dir / "run.json").read_text())["config"]


def record(i: int, sent_in: int, sent_out: int, served: int, late_ns: int) -> RequestRecord:
    r = RequestRecord.for_level(LevelKey("speed", 1, "x"), i, i, 1_000_000)
    r.sent_at = 1_000_000 + late_ns
    r.input_tokens_sent, r.max_tokens_sent = sent_in, sent_out
    r.prompt_tokens, r.completion_tokens = sent_in, served
    return r


def test_length_and_lateness_columns_from_records() -> None:
    rows = [record(i, 10 * (i + 1), 5, 5 if i else 2, i * 1_000_000) for i in range(5)]
    rows[4].status = "failed"
    lengths = length_fields(rows)
    assert lengths["input_tokens_sent_mean"] == 30.0 and lengths["input_tokens_sent_p50"] == 30
    assert lengths["input_tokens_sent_p90"] == pytest.approx(46.0)
    assert lengths["output_tokens_sent_p90"] == 5
    assert lengths["completion_tokens_p50"] == 5 and lengths["prompt_tokens_p50"] == 25
    assert "prompt_tokens_mean" not in lengths  # the throughput block owns the means
    late = lateness_fields(rows)
    assert late["send_lateness_mean_ms"] == 2.0 and late["send_lateness_max_ms"] == 4.0
    assert late["send_lateness_p99_ms"] == pytest.approx(3.96)
    # a closed loop, sent when a stream frees, has no lateness columns; a replay has them
    closed, replay = KINDS["closed"], KINDS["replay"]
    assert not closed.scheduled() and replay.scheduled()
    assert length_fields([]) == {}


def test_length_histograms_share_edges_between_sent_and_served() -> None:
    from servecap.metrics.lengths import length_histograms

    rows = [record(i, 10 * (i + 1), 8, 8 if i else 2, 0) for i in range(6)]
    hist = length_histograms(rows)
    assert sum(hist["input"]["sent"]) == 6 and sum(hist["input"]["served"]) == 6
    assert hist["input"]["edges"][0] == 0 and hist["input"]["edges"][-1] == 60
    out = hist["output"]
    assert out["edges"] == [float(e) for e in range(9)]  # 12 bins of 0..8 round to 8
    assert sum(out["sent"]) == 6 and out["sent"][-1] == 6
    assert out["served"][2] == 1 and out["served"][-1] == 5  # the one that stopped at 2
    assert length_histograms([]) == {}
