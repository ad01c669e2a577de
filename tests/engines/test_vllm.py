"""servecap against live vLLM on the CPU: the seed's engine, plain and with n-gram speculation.

Two servers of the copying model (`copymodel`: its greedy output repeats itself, so n-gram
drafts are accepted) run side by side. These tests check function, not fit: every request
answered with the tokens vLLM counted, vLLM's /metrics mapped series by series, the report's
server view, `compare` and `capacity` across the two, the prefix-cache features against
vLLM's own counters, and vLLM's own message for a request beyond the context.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from servecap.client.metrics_scrape import parse_exposition
from servecap.core.server_series import detect_engine
from servecap.metrics.prefix_hits import DISAGREE_BY
from servecap.storage.capacity_answer import EXIT_CODES
from tests.engines import checks
from tests.engines.conftest import VllmPair
from tests.engines.procs import VLLM_BLOCK_TOKENS, VLLM_MAX_MODEL_LEN, Engine
from tests.engines.sweep import measured, read_json, run_sweep, servecap

pytestmark = [pytest.mark.engine, pytest.mark.slow, pytest.mark.timeout(1200)]

LEVELS = (1, 2, 4, 8)
ROUNDS = 2
# Greedy, so plain and speculative vLLM generate the same text and speculation changes only
# the speed (at temperature 1, vLLM 0.32.0's n-gram path on the CPU emitted tokens its own
# model gave a log-probability of -418: see docs/validation/vllm-live.md); `ignore_eos` as
# the how-to's recipe for exactly N output tokens.
VLLM_EXTRA_BODY: dict[str, Any] = {"temperature": 0, "ignore_eos": True}
# The canonical series the report's server view reads, each of which vLLM must export under a
# name servecap maps (`core.server_series.SERIES_TABLE`): a rename fails here.
PLAIN_SERIES = {
    "running", "waiting", "kv_usage", "preemptions", "prefix_queries", "prefix_hits",
    "prompt_tokens", "generation_tokens", "ttft_sum_s", "ttft_count", "itl_sum_s", "itl_count",
}
SPEC_SERIES = PLAIN_SERIES | {"spec_drafts", "spec_draft_tokens", "spec_accepted_tokens"}
# capacity's SLOs: c=1 must pass on a busy machine too, where the server may get half its core
# (a CPU hog on core 0 held plain vLLM to <= 48 tok/s per user at c=1, against ~100 alone), so
# TTFT binds, a few streams up, and the TPS floor sits far below what c=1 reaches
CAPACITY_TTFT_MS = 300
CAPACITY_TPS = 20


def _sweep(engine: Engine, out: Path, name: str) -> Path:
    return run_sweep(engine.base_url, engine.model, out, name,
                     levels=",".join(map(str, LEVELS)), rounds=ROUNDS,
                     extra_body=VLLM_EXTRA_BODY)


@pytest.fixture(scope="module")
def plain_run(vllm_pair: VllmPair, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _sweep(vllm_pair.plain, tmp_path_factory.mktemp("vllm-plain"), "vllm-plain")


@pytest.fixture(scope="module")
def spec_run(vllm_pair: VllmPair, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _sweep(vllm_pair.spec, tmp_path_factory.mktemp("vllm-spec"), "vllm-spec")


def _levels(run_dir: Path) -> list[dict[str, Any]]:
    summary = read_json(run_dir / "summary.json")
    return list(summary["levels"] if isinstance(summary, dict) else summary)


def test_wire_style_one_token_a_chunk_usage_chunk_then_done(vllm_pair: VllmPair) -> None:
    payloads = checks.raw_stream(vllm_pair.plain.base_url, "tiny")
    assert payloads[-1] == "[DONE]"
    chunks = checks.parse_chunks(payloads)
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 4
    assert sum(bool(c["choices"] and c["choices"][0]["delta"].get("content"))
               for c in chunks) == 4


def test_plain_sweep_every_request_ok_with_the_tokens_vllm_counted(plain_run: Path) -> None:
    records = checks.assert_sweep_ok(plain_run, LEVELS, ROUNDS)
    checks.assert_prompt_lengths(records)
    assert read_json(plain_run / "run.json")["server"]["engine"]["name"] == "vllm"


def test_speculative_sweep_counts_tokens_not_chunks(spec_run: Path) -> None:
    """Speculation streams several tokens a chunk: usage, not chunks, counts the tokens."""
    records = measured(spec_run)
    assert len(records) == sum(LEVELS) * ROUNDS
    assert all(r.ok and r.token_source == "usage" for r in records)
    assert all(r.completion_tokens == checks.OUTPUT_TOKENS for r in records)
    chunks = sum(len(r.chunk_at) for r in records) / len(records)
    assert chunks < checks.OUTPUT_TOKENS / 2, chunks  # >= 2 tokens a chunk on average
    # the copying model's drafts are accepted: vLLM's own counters say how often
    for level in _levels(spec_run):
        acceptance = level["server_spec_acceptance"]
        assert acceptance is not None and acceptance > 0.5, (level["concurrency"], acceptance)
        assert level["server_spec_accept_length"] > 2


def test_every_series_the_server_view_reads_is_mapped_from_live_vllm(
    vllm_pair: VllmPair, plain_run: Path, spec_run: Path
) -> None:
    for engine, wanted in ((vllm_pair.plain, PLAIN_SERIES), (vllm_pair.spec, SPEC_SERIES)):
        with urllib.request.urlopen(engine.root + "/metrics", timeout=10) as answer:
            samples, canonical = parse_exposition(answer.read().decode())
        assert detect_engine(samples) == "vllm"
        assert wanted <= set(canonical), f"{engine.name}: unmapped {wanted - set(canonical)}"
    for run_dir in (plain_run, spec_run):
        status = read_json(run_dir / "run.json")["server_metrics"]
        assert status["state"] == "on" and status["errors"] == {}, status
        top = _levels(run_dir)[-1]
        assert top["server_scrapes"] >= 1 and top["server_generation_tok_s"] > 0
        assert top["server_ttft_mean_ms"] > 0 and top["server_itl_mean_ms"] > 0


def test_the_report_shows_vllm_s_own_view(plain_run: Path, spec_run: Path,
                                          tmp_path: Path) -> None:
    done = servecap("report", str(plain_run), str(spec_run), "--out", str(tmp_path / "r"))
    assert done.returncode == 0, done.stderr
    md = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert "## 14. The server's view" in md
    for name in ("vllm-plain", "vllm-spec"):
        assert f"{name}: the server's view per level" in md
        assert f"{name}: scraped http://127.0.0.1:" in md


def test_compare_gives_speculation_s_speed_up_at_c1(vllm_pair: VllmPair, tmp_path: Path) -> None:
    done = servecap(
        "compare", "--target", f"plain={vllm_pair.plain.base_url}",
        "--target", f"spec={vllm_pair.spec.base_url}", "--model", "tiny",
        "--concurrency", "1,2", "--rounds", "4", "--repeats", "2", "--input-tokens", "128",
        "--output-tokens", "32", "--extra-body", json.dumps(VLLM_EXTRA_BODY),
        "--out", str(tmp_path), timeout_s=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    (path,) = tmp_path.glob("compare-*/comparison.json")
    (headline,) = read_json(path)["headlines"]
    at_1 = next(s for s in headline["speedups"] if s["level"] == "c=1")
    assert at_1["low"] > 1.0, at_1  # speculation pays off at c=1, beyond its interval
    assert "at c=1 spec gives each user" in done.stdout


def test_capacity_of_both_verified_with_the_delta_s_interval(
    vllm_pair: VllmPair, tmp_path: Path
) -> None:
    out = tmp_path / "capacity"
    done = servecap(
        "capacity", "--target", f"plain={vllm_pair.plain.base_url}",
        "--target", f"spec={vllm_pair.spec.base_url}", "--model", "tiny",
        "--input-tokens", "128", "--output-tokens", "32",
        "--extra-body", json.dumps(VLLM_EXTRA_BODY), "--ttft-slo-ms", str(CAPACITY_TTFT_MS),
        "--tps-slo", str(CAPACITY_TPS), "--think-time", "exp:1", "--max-time", "4m",
        "--users-duration", "8", "--out", str(out), timeout_s=900,
    )
    answer = read_json(out / "capacity.json")
    assert answer["complete"], done.stdout + done.stderr[-3000:]
    for target in answer["targets"]:
        # a busy machine may flag the client itself at the first miss: the answer whole
        assert target["status"] in ("found", "client_bound"), target
        assert target["first_miss"] == target["c_max"] + 1
        assert target["verified_users"], target
        assert target["diagnosis"] is None  # every request answered
    assert done.returncode in {EXIT_CODES[t["status"]] for t in answer["targets"]}
    (delta,) = answer["deltas"]
    assert (delta["a"], delta["b"]) == ("plain", "spec")
    assert delta["low"] <= delta["c_max"] <= delta["high"]
    assert "spec - plain =" in done.stdout


def test_prefix_cache_reset_and_built_hits_agree_with_vllm_s_counters(
    vllm_pair: VllmPair, tmp_path: Path
) -> None:
    """Each level starts on an emptied cache (vLLM's dev-mode reset); once its first wave of
    requests has run, every request finds the same shared prefix, in whole 32-token blocks;
    the hit rate by usage agrees with vLLM's own counters."""
    engine = vllm_pair.plain
    done = servecap(
        "run", "--base-url", engine.base_url, "--model", "tiny", "--name", "prefix",
        "--concurrency", "1,2", "--rounds", "4", "--warmup", "0", "--input-tokens", "512",
        "--output-tokens", "4", "--prefix-hit-rate", "0.75", "--reset-prefix-cache", "auto",
        "--extra-body", json.dumps(VLLM_EXTRA_BODY), "--out", str(tmp_path),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (run_dir,) = (p.parent for p in tmp_path.glob("*/run.json"))
    assert read_json(run_dir / "run.json")["prefix_cache"]["reset_done"].startswith(
        "auto: POST http://127.0.0.1:")
    levels = _levels(run_dir)
    assert [level["concurrency"] for level in levels] == [1, 2]
    for level in levels:
        assert level["prefix_cache_reset"] == "done"
        assert level["server_prefix_hit_rate"] == pytest.approx(
            level["prefix_hit_rate_usage"], abs=DISAGREE_BY)
        records = sorted((r for r in measured(run_dir) if r.concurrency == level["concurrency"]),
                         key=lambda r: r.sent_at or 0)
        # the level's first request finds nothing: the reset emptied what the last level cached
        assert records[0].cached_tokens == 0
        hits = {r.cached_tokens for r in records[level["concurrency"]:]}
        assert len(hits) == 1, hits  # one shared prefix: the same blocks every time
        (hit,) = hits
        assert hit is not None and hit > 0 and hit % VLLM_BLOCK_TOKENS == 0


def test_a_prompt_beyond_the_context_is_recorded_with_vllm_s_message(
    vllm_pair: VllmPair, tmp_path: Path
) -> None:
    engine = vllm_pair.plain
    done = servecap(
        "run", "--base-url", engine.base_url, "--model", "tiny", "--name", "too-long",
        "--concurrency", "1", "--rounds", "1", "--warmup", "0",
        "--input-tokens", str(2 * VLLM_MAX_MODEL_LEN), "--output-tokens", "4",
        "--out", str(tmp_path),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (run_dir,) = (p.parent for p in tmp_path.glob("*/run.json"))
    (record,) = measured(run_dir)
    assert not record.ok and record.reason == "http_4xx" and record.http_status == 400
    assert f"maximum context length is {VLLM_MAX_MODEL_LEN} tokens" in (record.detail or "")
