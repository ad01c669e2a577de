"""Assertions shared by the engine tests: a sweep that a real engine answered correctly."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

from servecap.core.records import RequestRecord
from tests.engines.sweep import INPUT_TOKENS, OUTPUT_TOKENS, measured, read_json

# Prompt tokens the server reports: the prompt (built for INPUT_TOKENS at 4 chars/token; the
# tiny vocabulary is trained to ~4.0 chars/token on these prompts) plus ChatML framing
# (<|im_start|>user\n ... <|im_end|>\n<|im_start|>assistant\n: 9 tokens). Prompts differ in
# their leading instruction, which tokenizes less well than the padding, so single prompts
# spread ~+-15%; the mean must sit within 10% of the target plus the framing.
CHATML_TOKENS = 9
MEAN_TOLERANCE = 0.10
EACH_TOLERANCE = 0.25


def assert_sweep_ok(run_dir: Path, levels: tuple[int, ...], rounds: int) -> list[RequestRecord]:
    """Every request ok, exactly OUTPUT_TOKENS tokens from usage, one token a chunk."""
    records = measured(run_dir)
    assert len(records) == sum(levels) * rounds
    bad = [(r.request_id, r.reason, r.detail) for r in records if not r.ok]
    assert not bad, f"failed requests: {bad[:5]}"
    for record in records:
        assert record.token_source == "usage"
        assert record.completion_tokens == OUTPUT_TOKENS
        assert len(record.chunk_at) == OUTPUT_TOKENS, "one token per chunk"
        assert record.finish_reason == "length"
    summary = read_json(run_dir / "summary.json")
    levels_seen = summary["levels"] if isinstance(summary, dict) else summary
    assert [lv["concurrency"] for lv in levels_seen] == list(levels)
    for level in levels_seen:
        assert level["n_failed"] == 0 and level["n_ok"] == level["concurrency"] * rounds
        assert level["tokens_from_usage"] is True
        assert level["itl_mean_ms"] and level["itl_mean_ms"] > 0
    return records


def assert_prompt_lengths(records: list[RequestRecord]) -> None:
    target = INPUT_TOKENS + CHATML_TOKENS
    prompts = [r.prompt_tokens or 0 for r in records]
    mean = sum(prompts) / len(prompts)
    assert abs(mean - target) <= MEAN_TOLERANCE * target, (mean, target)
    worst = max(prompts, key=lambda p: abs(p - target))
    assert abs(worst - target) <= EACH_TOLERANCE * target, (worst, target)


def raw_stream(base_url: str, model: str, max_tokens: int = 4) -> list[str]:
    """The `data:` payloads of one streamed chat completion, exactly as the engine sent them."""
    body = {
        "model": model, "max_tokens": max_tokens, "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "Describe the water cycle."}],
    }
    request = urllib.request.Request(
        base_url + "/chat/completions", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        text = response.read().decode()
    return [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]


def parse_chunks(payloads: list[str]) -> list[dict[str, Any]]:
    return [json.loads(p) for p in payloads if p != "[DONE]"]
