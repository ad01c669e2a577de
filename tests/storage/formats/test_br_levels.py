"""BR partials of other levels than a plain closed loop, from real runs: users levels
(session performance), failed requests (a small chat server that fails every few), each side
of a comparison, and an open-loop level whose window leaves requests out."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from servecap.api.run.run import Secrets, run_benchmark, run_benchmark_async
from servecap.sim import SimServerHandle
from servecap.storage.formats.br_out import BR_DIR, counted_rows
from servecap.storage.runs import load_run
from tests.load.test_sessions_run import chat_app, sessions_config
from tests.servers.app_thread import AppThread
from tests.storage.formats.conftest import nulls_or_empties

pytestmark = pytest.mark.timeout(120)


def only_partial(run_dir: Path) -> dict[str, Any]:
    (path,) = (run_dir / BR_DIR).iterdir()
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


@pytest.mark.slow
def test_a_users_level_has_session_performance(
    sim: SimServerHandle, tmp_path: Path, br_validator: Any
) -> None:
    config = sessions_config(sim.base_url, tmp_path, users=[3], think="fixed:0.02")
    run_dir = run_benchmark(config, Secrets()).run_dir
    doc = only_partial(run_dir)
    br_validator.validate(doc)
    assert nulls_or_empties(doc) == []
    run = load_run(run_dir)
    (rows,) = counted_rows(run).values()
    sessions = doc["results"]["session_performance"]["sessions"]
    conversations = {(r.user, r.conversation) for r in rows}
    assert sessions["total"] == len(conversations) >= 3
    assert sessions["total_events"] == len(rows) == run.levels[0].n_requests
    assert sessions["events_per_session"]["mean"] == pytest.approx(len(rows) / len(conversations))
    assert sessions["events_per_session"]["units"] == "count"
    outputs = sessions["output_tokens_per_session"]
    assert outputs["mean"] * sessions["total"] == sum(r.output_tokens for r in rows if r.ok)
    for left_out in ("succeeded", "failed", "session_duration", "session_rate"):
        assert left_out not in sessions


@pytest.mark.slow
def test_failures_are_counted_and_left_out_of_latency(tmp_path: Path, br_validator: Any) -> None:
    seen: list[list[dict[str, str]]] = []
    with AppThread(chat_app(seen, fail_every=3)) as server:
        config = sessions_config(server.base_url, tmp_path, users=[2], ramp_s=0.0)
        run_dir = asyncio.run(run_benchmark_async(config)).run_dir
    doc = only_partial(run_dir)
    br_validator.validate(doc)
    (level,) = load_run(run_dir).levels
    aggregate = doc["results"]["request_performance"]["aggregate"]
    assert level.n_failed and level.n_failed > 0 and level.n_ok
    assert aggregate["requests"]["total"] == level.n_requests
    assert aggregate["requests"]["failures"] == level.n_failed
    assert aggregate["requests"]["output_length"]["mean"] == pytest.approx(2.0)  # usage: 2
    assert aggregate["latency"]["time_to_first_token"]["mean"] == pytest.approx(
        level.ttft_mean_ms / 1000, rel=1e-9)
    assert aggregate["throughput"]["request_rate"]["mean"] == pytest.approx(level.rps)
    # two chunks of one token each ("answer-K", " done"): the gaps are inter-token gaps
    assert "inter_token_latency" in aggregate["latency"]


@pytest.mark.slow
def test_each_side_of_a_comparison_writes_its_partials(tmp_path: Path, br_validator: Any) -> None:
    """A comparison's runs (repeats pooled, as their summaries are) get partials too."""
    from typer.testing import CliRunner

    from servecap.cli.main import app

    result = CliRunner().invoke(app, [
        "compare", "--target", "a=sim:deterministic*2", "--target", "b=sim:deterministic",
        "--repeats", "2", "--concurrency", "1,2", "--rounds", "2", "--output-tokens", "8",
        "--seed", "5", "--out", str(tmp_path),
    ])
    assert result.exit_code == 0, result.output
    runs = sorted(p.parent for p in tmp_path.glob("*/*/run.json"))
    assert len(runs) == 2
    for run_dir in runs:
        docs = [json.loads(p.read_text()) for p in sorted((run_dir / BR_DIR).iterdir())]
        levels = load_run(run_dir).levels
        assert len(docs) == len(levels) == 2
        for doc, level in zip(docs, levels, strict=True):
            br_validator.validate(doc)
            requests = doc["results"]["request_performance"]["aggregate"]["requests"]
            assert requests["total"] == level.n_requests == 2 * 2 * level.key.value


@pytest.mark.slow
def test_an_open_loop_level_counts_its_window_as_its_summary_does(
    sim: SimServerHandle, tmp_path: Path, br_validator: Any
) -> None:
    """A rate level's warm-up and cool-down requests stay out of its partial, as out of its
    summary: the same counts, the same TTFT and rate."""
    from servecap.api.run.run_config import RunConfig
    from servecap.core.config import ClientOptions
    from servecap.kinds.open_loop import OpenLoad

    config = RunConfig(
        name="open", warmup=0, output_tokens=8, input_tokens=16, out_dir=str(tmp_path),
        client=ClientOptions(base_url=sim.base_url),
        load=OpenLoad(rates=[40.0], duration_s=1.5, warmup_s=0.3, cooldown_s=0.3, seed=3),
    )
    run_dir = run_benchmark(config, Secrets()).run_dir
    doc = only_partial(run_dir)
    br_validator.validate(doc)
    run = load_run(run_dir)
    (level,) = run.levels
    every = [r for r in run.iter_records() if not r.warmup]
    assert level.n_left_out and len(every) == level.n_requests + level.n_left_out
    aggregate = doc["results"]["request_performance"]["aggregate"]
    assert aggregate["requests"]["total"] == level.n_requests
    assert aggregate["latency"]["time_to_first_token"]["p90"] == pytest.approx(
        level.ttft_p90_ms / 1000, rel=1e-9)
    assert aggregate["throughput"]["request_rate"]["mean"] == pytest.approx(level.rps, rel=1e-12)
