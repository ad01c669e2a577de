"""The Mooncake conversation trace's first 10 minutes through the step model (virtual time):
with room for the trace's working set, the prefix cache's hit rate is the one its
``hash_ids`` imply, and shared prefixes lower the mean TTFT. The trace's first 2000 rows are
in the repository (tests/data/traces, with its source and license): they cover the window."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from servecap.sim.model.blocks import block_hashes
from servecap.sim.model.params import ModelParams
from servecap.sim.model.step_engine import StepEngine

TRACE = (
    Path(__file__).resolve().parents[2] / "data" / "traces" / "mooncake-conversation-head2000.jsonl"
)
HASH_BLOCK = 512  # tokens a Mooncake hash id stands for
WINDOW_MS = 600_000


def rows() -> list[dict[str, Any]]:
    out = []
    with TRACE.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row["timestamp"] >= WINDOW_MS:
                return out
            out.append(row)
    raise AssertionError(f"{TRACE} ends inside the {WINDOW_MS} ms window")


def implied_hit_rate(trace: list[dict[str, Any]]) -> float:
    """Prompt tokens a cache that never evicts would hold: the leading ids seen before,
    512 tokens each, at most all but the last prompt token."""
    seen: set[int] = set()
    hits = total = 0
    for row in trace:
        n = 0
        for block in row["hash_ids"]:
            if block not in seen:
                break
            n += 1
        hits += min(n * HASH_BLOCK, row["input_length"] - 1)
        total += row["input_length"]
        seen.update(row["hash_ids"])
    return hits / total


def text_of(row: dict[str, Any]) -> str:
    """The prompt text: hash id k is always the same 512-token (2048-character) text."""
    text = "".join(f"{k:>12}".ljust(4 * HASH_BLOCK, ".") for k in row["hash_ids"])
    return text[: 4 * row["input_length"]]


def replay(trace: list[dict[str, Any]], params: ModelParams) -> tuple[StepEngine, float]:
    """Every request at its offset, one output token (TTFT is what a prefix changes);
    returns the engine and the mean TTFT in seconds."""
    eng = StepEngine(params)
    sent: dict[int, float] = {}
    ttft: list[float] = []
    rid = 0
    for _ in range(10**7):
        due = eng.next_time()
        arrival = trace[rid]["timestamp"] / 1000 if rid < len(trace) else None
        if arrival is not None and (due is None or arrival <= due):
            row = trace[rid]
            eng.add(rid, row["input_length"], 1, arrival, block_hashes(text_of(row), 16))
            sent[rid] = arrival
            rid += 1
            continue
        if due is None:
            break
        ttft += [due - sent[e.rid] for e in eng.advance(due) if e.first]
    assert len(ttft) == len(trace)
    return eng, sum(ttft) / len(ttft)


FAST = ModelParams(
    idle_window_ms=0.0,
    step_base_ms=5.0,
    prefill_ms_per_token=0.02,
    prefill_budget_tokens=8192,
    kv_budget_tokens=40_000_000,  # the window's working set is ~18M tokens
    prefix_caching=True,
)


@pytest.mark.slow
def test_mooncake_hit_rate_is_what_the_hash_ids_imply() -> None:
    trace = rows()
    assert len(trace) > 1000
    eng, cached_ttft = replay(trace, FAST)
    c = eng.counters
    assert c.prefix_queries == sum(row["input_length"] for row in trace)
    want = implied_hit_rate(trace)
    # the sim matches in 16-token blocks: a partial last 512-token block shares only its
    # full 16-token blocks with a later prompt that holds the whole block
    assert c.prefix_hits / c.prefix_queries == pytest.approx(want, abs=0.01)
    _, plain_ttft = replay(trace, FAST.model_copy(update={"prefix_caching": False}))
    assert cached_ttft < 0.9 * plain_ttft, (cached_ttft, plain_ttft)


@pytest.mark.slow
def test_a_small_kv_budget_evicts_and_hits_less() -> None:
    trace = rows()[:600]
    roomy, _ = replay(trace, FAST)
    small, _ = replay(trace, FAST.model_copy(update={"kv_budget_tokens": 200_000}))
    rate = lambda e: e.counters.prefix_hits / e.counters.prefix_queries  # noqa: E731
    assert rate(small) < rate(roomy) - 0.05, (rate(small), rate(roomy))
