"""A level's `scenario.load` in its BR v0.2.1 partial: what servecap sent, standardized.

The stage is the level's place in the run, its load a concurrency (a level that holds a
fixed number of streams) or a rate (a level with an offered rate), as its kind says; the
sequence lengths are what the server counted (`fixed` when every request had the same,
else `other` with its mean, min and max). `native.args` is the run's own stored config,
which names no secret. A reader keys a stage on it, so a run exported and imported back is
the same levels (`br_in`).
"""

from __future__ import annotations

from typing import Any

from servecap import __version__
from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary
from servecap.kinds.registry import kind_of
from servecap.storage.run_dir import Run

TOOL = "servecap"
LOAD_SCHEMA_VERSION = "0.0.1"


def sequence_length(counts: list[int]) -> dict[str, Any] | None:
    """BR's `SequenceLength` of these token counts (None when the server counted none)."""
    if not counts:
        return None
    low, high = min(counts), max(counts)
    if low == high:
        return {"distribution": "fixed", "value": low}
    return {"distribution": "other", "value": sum(counts) / len(counts), "min": low,
            "max": max(high, 1)}


def _source(run: Run) -> str:
    """Built-in prompts are random tokens of a length; a dataset's or a trace's are sampled."""
    config = run.info.config
    workload = config.get("workload") or {}
    sampled = workload.get("dataset") or (config.get("load") or {}).get("trace")
    return "sampled" if sampled else "random"


def scenario_load(run: Run, summary: LevelSummary, rows: list[RequestRecord], stage: int
                  ) -> dict[str, Any]:
    """The level's `scenario.load` block (nulls are stripped by the caller)."""
    kind, key = kind_of(summary.key), summary.key
    done = [r for r in rows if r.status == "ok"]
    standardized: dict[str, Any] = {
        "tool": TOOL, "tool_version": run.info.tool_version or __version__,
        "source": _source(run), "stage": stage,
        "input_seq_len": sequence_length([r.prompt_tokens for r in done
                                          if r.prompt_tokens is not None])
        or {"distribution": "other", "value": 0},
        "output_seq_len": sequence_length([r.completion_tokens for r in done
                                           if r.completion_tokens is not None]),
        "concurrency": kind.streams(key), "rate_qps": kind.offered_rate(key),
        "parallelism": summary.workers or 1,
    }
    return {
        "metadata": {"schema_version": LOAD_SCHEMA_VERSION,
                     "description": f"{TOOL} run {run.path.name}, level {key}"},
        "standardized": standardized,
        "native": {"args": dict(run.info.config)},
    }
