"""servecap against llama.cpp's llama-server (CPU, 8 slots, the tiny GGUF).

llama-server sends usage on a separate final chunk with empty `choices`, then `[DONE]`, and
its final chunk carries `timings`: its own per-token generation time, which servecap's
client-side ITL must agree with.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engines import checks
from tests.engines.procs import SLOTS, Engine
from tests.engines.sweep import (
    LLAMA_EXTRA_BODY,
    crosscheck,
    measured,
    read_json,
    run_sweep,
    servecap,
)

pytestmark = [pytest.mark.engine, pytest.mark.slow, pytest.mark.timeout(1800)]

LEVELS = (1, 2, 4, 8)
ROUNDS = 3
ITL_TOLERANCE = 0.10


@pytest.fixture(scope="module")
def llama_run(llama_engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("llama-runs")
    return run_sweep(
        llama_engine.base_url, llama_engine.model, out, "llama-tiny",
        levels=",".join(map(str, LEVELS)), rounds=ROUNDS, extra_body=LLAMA_EXTRA_BODY,
    )


def test_wire_style_usage_chunk_then_done(llama_engine: Engine) -> None:
    payloads = checks.raw_stream(llama_engine.base_url, "whatever")
    assert payloads[-1] == "[DONE]"
    chunks = checks.parse_chunks(payloads)
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["completion_tokens"] == 4
    assert "predicted_per_token_ms" in chunks[-1]["timings"]


def test_sweep_every_request_ok_with_usage(llama_run: Path) -> None:
    records = checks.assert_sweep_ok(llama_run, LEVELS, ROUNDS)
    checks.assert_prompt_lengths(records)
    assert all(r.server_timings and r.server_timings["predicted_n"] == 32 for r in records)


def test_itl_agrees_with_llama_server_timings(llama_run: Path) -> None:
    rows = crosscheck(measured(llama_run))
    assert [row.concurrency for row in rows] == list(LEVELS)
    ours = sum(r.servecap_itl_ms * r.n for r in rows) / sum(r.n for r in rows)
    theirs = sum(r.engine_itl_ms * r.n for r in rows) / sum(r.n for r in rows)
    assert abs(ours / theirs - 1) <= ITL_TOLERANCE, (ours, theirs, rows)
    for row in rows:
        assert abs(row.ratio - 1) <= ITL_TOLERANCE, row


def test_run_json_detects_llama_cpp(llama_run: Path) -> None:
    engine = read_json(llama_run / "run.json")["server"]["engine"]
    assert engine["name"] == "llama.cpp"
    assert engine["version"]
    assert engine["total_slots"] == SLOTS


def test_plan_and_report_work_on_the_run(llama_run: Path, tmp_path: Path) -> None:
    plan = servecap("plan", str(llama_run), "--format", "json", "--tps-slo", "1")
    assert plan.returncode == 0, plan.stderr
    assert '"runs"' in plan.stdout
    report = servecap("report", str(llama_run), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    assert any((tmp_path / "report").iterdir())


def test_keep_alive_reuse_without_connection_close(
    llama_engine: Engine, tmp_path: Path
) -> None:
    """llama-server says `Keep-Alive` yet closes after each stream.

    The pool may hand that closed connection to the next request, which fails before any
    response byte; the client sends it again on another connection and counts it.
    """
    run_dir = run_sweep(
        llama_engine.base_url, llama_engine.model, tmp_path, "keepalive", levels="1,4",
        rounds=4, extra_body=LLAMA_EXTRA_BODY,
    )
    records = measured(run_dir)
    failed = [(r.reason, r.detail) for r in records if not r.ok]
    assert not failed, failed[:3]
    assert all(r.reconnects <= 4 for r in records)  # at most the pool's connections (c <= 4)


def test_metrics_scraped_and_mapped(llama_engine: Engine, llama_run: Path) -> None:
    """A real llama-server --metrics: scraped during the sweep, mapped, per-level fields."""
    import json
    import urllib.request

    from servecap.client.metrics_scrape import parse_exposition
    from servecap.core.server_series import detect_engine
    from servecap.storage.server_metrics_file import SERVER_METRICS_FILE, read_scrapes

    status = read_json(llama_run / "run.json")["server_metrics"]
    assert status["state"] == "on" and status["errors"] == {}, status
    scrapes = list(read_scrapes(llama_run / SERVER_METRICS_FILE))
    assert scrapes and all(s.error is None for s in scrapes)
    assert detect_engine(scrapes[-1].samples) == "llama.cpp"
    assert {"running", "waiting", "prompt_tokens", "generation_tokens"} <= set(scrapes[-1].series)
    records = [json.loads(line) for line in (llama_run / "requests.jsonl").read_text().splitlines()]
    # llama-server counts its tokens as each request ends: after the sweep they are all in
    assert scrapes[-1].series["generation_tokens"] >= sum(r["completion_tokens"] for r in records)
    summary = read_json(llama_run / "summary.json")
    top = summary[-1]
    assert top["server_scrapes"] >= 1 and top["server_running_max"] >= 1
    assert top["server_generation_tok_s"] > 0
    root = llama_engine.base_url.removesuffix("/v1")
    with urllib.request.urlopen(f"{root}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    assert parse_exposition(text)[1]["generation_tokens"] > 0
