"""servecap run against a server with an exact schedule reports what the schedule implies."""

import asyncio
import json
import statistics

import pytest

from servecap.api.run.run import run_benchmark_async
from servecap.api.run.run_config import RunConfig
from servecap.core.config import ClientOptions
from servecap.storage.run_dir import SUMMARY_JSON
from servecap.storage.runs import load_run
from tests.servers.process import server_process
from tests.servers.schedule_server import Schedule, ServerThread, make_app

TTFT_S, ITL_S, N = 0.05, 0.01, 32
#: the level's clock and its requests' means are stamped apart: a rate a hair over its bound
RATE_SLACK = 0.02


def sweep(base_url, out_dir, levels, rounds=3, **kw):
    config = RunConfig(
        concurrency=levels, rounds=rounds, output_tokens=N, out_dir=str(out_dir),
        client=ClientOptions(base_url=base_url), **kw,
    )
    return asyncio.run(run_benchmark_async(config))


def server_side(run_dir, concurrency):
    """Mean TTFT (ms), latency (s) and ITL (ms) as the server's own stamps saw them.

    The schedule server sends its perf_counter stamps in the final chunk; perf_counter is
    CLOCK_MONOTONIC, one clock for every process on the machine.
    """
    rows = [json.loads(line) for line in (run_dir / "requests.jsonl").read_text().splitlines()]
    timings = [r["server_timings"] for r in rows
               if r["concurrency"] == concurrency and not r["warmup"]]
    ttft = [(t["first_write_ns"] - t["handler_start_ns"]) / 1e6 for t in timings]
    latency = [(t["last_write_ns"] - t["handler_start_ns"]) / 1e9 for t in timings]
    spread = [(t["last_write_ns"] - t["first_write_ns"]) / 1e6 for t in timings]
    return statistics.mean(ttft), statistics.mean(latency), statistics.mean(spread)


@pytest.mark.parametrize(
    ("tokens_per_chunk", "per_chunk_usage"), [(1, False), (4, False), (4, True)]
)
@pytest.mark.slow
def test_measures_the_schedule(tmp_path, tokens_per_chunk, per_chunk_usage):
    interval = ITL_S * tokens_per_chunk
    args = ["--ttft-ms", str(TTFT_S * 1000), "--interval-ms", str(interval * 1000),
            "--tokens-per-chunk", str(tokens_per_chunk)]
    if per_chunk_usage:
        args.append("--per-chunk-usage")
    # The server runs in its own process so that its work is not charged to the client.
    with server_process("tests.servers.schedule_server", *args) as base_url:
        outcome = sweep(base_url, tmp_path, [1, 16])
    by_c = {lv.concurrency: lv for lv in outcome.levels}
    # What holds on any machine, loaded or not: each level measures what the server did
    # within the tolerance, or says that it cannot be trusted (client-bound, with the
    # reason). The reference is the server's own stamps, so a server process slowed by a
    # busy machine is measured as slow (that is its latency), while the client's own delay
    # is the error. Tolerances still catch a wrong timestamp (off by a whole TTFT or a
    # 10 ms chunk interval); bench/ quotes the real error.
    for c, ttft_tol_ms in ((1, 7.5), (16, 15.0)):
        lv = by_c[c]
        assert lv.n_ok == 3 * c and lv.n_failed == 0
        assert lv.tokens_from_usage is True
        assert lv.completion_tokens_mean == N
        assert lv.prompt_tokens_mean == 100
        server_ttft, server_latency, server_spread = server_side(outcome.run_dir, c)
        client_error_ms = max(lv.ttft_mean_ms - server_ttft,
                              1000 * (lv.latency_mean_s - server_latency))
        if client_error_ms > ttft_tol_ms:
            assert lv.client_bound, (c, client_error_ms, lv.client_delay_mean_ms, lv.warnings)
            assert any(w.startswith("client-bound") for w in lv.warnings)
            continue
        assert lv.ttft_mean_ms == pytest.approx(server_ttft, abs=ttft_tol_ms)
        assert server_ttft >= TTFT_S * 1000 - 1  # the server keeps its schedule or is late
        assert lv.itl_mean_ms == pytest.approx(
            server_spread / (N - tokens_per_chunk), rel=0.05, abs=ttft_tol_ms / N)
        assert lv.latency_mean_s == pytest.approx(server_latency, abs=ttft_tol_ms / 1000)
    for c, lv in by_c.items():
        # c streams, one request each at a time: the level's rates cannot pass c requests
        # per mean latency, however loaded the machine (the gaps between them only lower it)
        assert lv.rps <= c / lv.latency_mean_s * (1 + RATE_SLACK)
        assert lv.output_tok_s <= c * N / lv.latency_mean_s * (1 + RATE_SLACK)
        assert lv.served_concurrency <= c * (1 + RATE_SLACK)
    assert outcome.info.status == "complete"


def test_run_directory_round_trips(tmp_path):
    with ServerThread(make_app(Schedule(ttft_s=0.01, chunk_interval_s=0.002))) as server:
        outcome = sweep(server.base_url, tmp_path, [1, 2], rounds=2, name="round/trip")
    run_dir = outcome.run_dir
    assert run_dir.parent == tmp_path and "/" not in run_dir.name
    lines = (run_dir / "requests.jsonl").read_text().splitlines()
    assert len(lines) == 1 + 2 + 4  # warm-up plus rounds x c per level
    first = json.loads(lines[1])
    for key in ("scheduled_at", "sent_at", "first_byte_at", "first_token_at", "first_answer_at",
                "last_token_at", "ended_at", "chunk_at", "prompt_tokens", "completion_tokens",
                "token_source", "status", "http_status"):
        assert key in first
    stored = json.loads((run_dir / SUMMARY_JSON).read_text())
    # Summaries can be recomputed from requests.jsonl alone.
    (run_dir / SUMMARY_JSON).unlink()
    recomputed = load_run(run_dir).levels
    for saved, again in zip(stored, recomputed, strict=True):
        for key in ("n_ok", "ttft_mean_ms", "itl_p90_ms", "tps_p90", "rps", "output_tok_s",
                    "loop_lag_p99_ms", "client_cpu_pct", "client_bound"):
            assert again.model_dump()[key] == pytest.approx(saved[key])
    info = json.loads((run_dir / "run.json").read_text())
    assert info["config"]["model"] == "test-model" and info["server"]["models"] == ["test-model"]


def test_completions_endpoint(tmp_path):
    with ServerThread(make_app(Schedule(ttft_s=0.01, chunk_interval_s=0.002))) as server:
        outcome = sweep(server.base_url, tmp_path, [2], rounds=1, endpoint="completions")
    assert outcome.levels[0].n_ok == 2
