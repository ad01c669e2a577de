"""Drive `servecap run` against an engine and read the saved run back (tests and bench)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servecap.core.records import RequestRecord
from servecap.core.request_metrics import request_metrics
from servecap.storage.run_dir import iter_records

# The request shape every engine test uses: short outputs keep a 4-level sweep near a minute.
INPUT_TOKENS = 128
OUTPUT_TOKENS = 32
LEVELS = "1,2,4,8"
ROUNDS = 3

# Exactly N output tokens on each engine (the recipes in docs/how-to/benchmark-a-server.md;
# the tiny model never emits EOS anyway, so here they show the engines accept them).
# llama-server: `ignore_eos`.
# transformers serve: a request-level `generation_config` (a JSON string); on the continuous
# batching path a config without `eos_token_id` also disables EOS for the batch.
LLAMA_EXTRA_BODY: dict[str, Any] = {"ignore_eos": True}


def transformers_extra_body(output_tokens: int = OUTPUT_TOKENS) -> dict[str, Any]:
    """`--extra-body` for transformers serve: at least `output_tokens` new tokens."""
    return {"generation_config": json.dumps({"min_new_tokens": output_tokens})}


def servecap(*args: str, timeout_s: float = 600.0) -> subprocess.CompletedProcess[str]:
    """`servecap <args>` in a child process (its own event loop, signals and uvloop)."""
    return subprocess.run(
        [sys.executable, "-m", "servecap.cli.main", *args], capture_output=True, text=True,
        timeout=timeout_s, check=False,
    )


def run_sweep(
    base_url: str, model: str, out: Path, name: str, *, levels: str = LEVELS,
    rounds: int = ROUNDS, output_tokens: int = OUTPUT_TOKENS,
    extra_body: dict[str, Any] | None = None, headers: tuple[str, ...] = (),
    timeout_s: float = 600.0,
) -> Path:
    """One `servecap run` sweep; returns the run directory (raises with stderr on failure)."""
    args = [
        "run", "--base-url", base_url, "--model", model, "--name", name,
        "--concurrency", levels, "--rounds", str(rounds), "--warmup", "2",
        "--input-tokens", str(INPUT_TOKENS), "--output-tokens", str(output_tokens),
        "--timeout", "120", "--stall-timeout", "60", "--out", str(out),
    ]
    if extra_body:
        args += ["--extra-body", json.dumps(extra_body)]
    for header in headers:
        args += ["--header", header]
    result = servecap(*args, timeout_s=timeout_s)
    if result.returncode != 0:
        raise AssertionError(f"servecap run exited {result.returncode}:\n{result.stderr[-4000:]}")
    dirs = [p.parent for p in out.glob("*/run.json")]
    if len(dirs) != 1:
        raise AssertionError(f"expected one run directory under {out}, found {dirs}")
    return dirs[0]


def measured(run_dir: Path) -> list[RequestRecord]:
    """The measured (non-warm-up) records of a run."""
    return [r for r in iter_records(run_dir / "requests.jsonl") if not r.warmup]


def read_json(path: Path) -> Any:
    """A JSON file's content."""
    return json.loads(path.read_text())


@dataclass(frozen=True)
class Crosscheck:
    """servecap's per-token decode time against the engine's own, at one level."""

    concurrency: int
    n: int
    n_failed: int
    servecap_itl_ms: float
    engine_itl_ms: float
    servecap_ttft_ms: float
    engine_prompt_ms: float

    @property
    def ratio(self) -> float:
        return self.servecap_itl_ms / self.engine_itl_ms


def crosscheck(records: list[RequestRecord]) -> list[Crosscheck]:
    """Per level: mean ITL (servecap) vs mean `predicted_per_token_ms` (llama-server).

    Both are per gap: llama-server's figure is `predicted_ms / (predicted_n - 1)` (measured:
    predicted_ms spans first to last generated token), servecap's is first to last token
    chunk over N - 1 (one token a chunk here). Clocks differ: the server's is its own decode
    loop, servecap's is chunk arrival at the client.
    """
    rows = []
    for level in sorted({r.concurrency for r in records}):
        at_level = [r for r in records if r.concurrency == level]
        ours, theirs, ttft, prompt = [], [], [], []
        for record in at_level:
            metrics = request_metrics(record)
            timings = record.server_timings or {}
            if metrics is None or metrics.itl_ns is None:
                continue
            if "predicted_per_token_ms" not in timings:
                continue
            ours.append(metrics.itl_ns / 1e6)
            theirs.append(timings["predicted_per_token_ms"])
            ttft.append(metrics.ttft_ns / 1e6)
            prompt.append(timings.get("prompt_ms", 0.0))
        if ours:
            failed = sum(not r.ok for r in at_level)
            rows.append(Crosscheck(level, len(ours), failed, _mean(ours), _mean(theirs),
                                   _mean(ttft), _mean(prompt)))
    return rows


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)
