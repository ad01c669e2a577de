"""`vllm bench serve --save-result` JSON: one file per run (level).

With `--save-detailed` the file keeps every request's TTFT, the gaps between its chunks,
its lengths and its error, so each becomes a servecap record and servecap computes its own
statistics; without it, the aggregates become a summary-only level. Like SGLang's script it
keeps no send times and no per-request end (see `sglang_bench_in`). vLLM's chat client
stamps TTFT at the first chunk with `choices`, the role-only chunk included: where a
request has one chunk more than tokens, its first token is taken one gap later.
docs/formats/vllm-bench.md has the table.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from servecap.core import json_input
from servecap.core.errors import DataFormatError
from servecap.core.level_key import LevelKey
from servecap.core.summary import LevelSummary
from servecap.storage.formats.imported import (
    ImportedLevel,
    ImportedRun,
    concurrency_key,
    need,
    number,
    rate_key,
)
from servecap.storage.formats.sglang_bench_in import detail_records
from servecap.storage.safe_files import read_text_file

NAME = "vllm-bench"
LABEL = "vllm bench serve --save-result JSON (--save-detailed for per-request data)"
READ_LIMIT = 256 * 1024 * 1024

ALWAYS = [
    "send times: the file keeps none, so every request is stored as sent at 0 (no "
    "timeline, no send lateness); wall time, rps and output tok/s are the file's own "
    "(duration, completed, total_output_tokens)",
    "mean/median/p*_tpot_ms: (latency - TTFT) / (output - 1) per request, not servecap's "
    "ITL; mean/median/p*_itl_ms: vLLM's pooled chunk gaps, servecap's chunk gap; not used",
    "request_goodput, total_token_throughput, generated_texts: not imported",
]
DETAILED = [
    "latency: vLLM keeps no per-request end, so latency (and TPS = N / latency) runs to the "
    "last chunk, not the stream's end",
    "ttfts: vLLM's chat client stamps the first chunk with choices, a role-only one "
    "included; where a request has one chunk more than tokens, servecap's TTFT is one gap "
    "later (the first chunk that carried a token)",
]
AGGREGATE = [
    "per-request data: the file was saved without --save-detailed, so TPS and ITL are "
    "missing",
    "ttft aggregates: vLLM's chat client stamps a role-only first chunk as the first token; "
    "not used (servecap cannot tell from aggregates)",
]


def detects(path: Path, head: str) -> bool:
    return (path.is_file() and '"tokenizer_id"' in head and '"mean_ttft_ms"' in head
            and '"duration"' in head)


def read(path: Path) -> ImportedRun:
    text = read_text_file(path, "vllm bench serve result", limit=READ_LIMIT)
    row = json_input.loads(text, max_depth=16)
    if not isinstance(row, dict):
        raise DataFormatError(f"{path}: a vllm bench serve result is a JSON object")
    key = level_key(row, path)
    own = _throughput(row, path)
    if "ttfts" in row:
        records = detail_records(row, path, str(path), key, skip_empty_first=True)
        level = ImportedLevel(key, records=records, overrides=own)
        unmapped = ALWAYS + DETAILED
    else:
        level = ImportedLevel(key, summary=_summary(row, path, key, own))
        unmapped = ALWAYS + AGGREGATE
    return ImportedRun(
        name=f"vllm-bench-{row.get('model_id', 'run')}".replace("/", "-"),
        tool="vllm bench serve", tool_version="", format=NAME,
        files=[path.name], levels=[level], unmapped=list(unmapped),
    )


def level_key(row: dict[str, Any], path: Path) -> LevelKey:
    """A finite request rate makes a rate level; "inf" with a max concurrency a
    concurrency level."""
    rate = row.get("request_rate")
    cap = row.get("max_concurrency")
    if isinstance(rate, int | float) and not isinstance(rate, bool) and math.isfinite(rate):
        return rate_key(number(rate, path, "request_rate") or 0)
    if isinstance(cap, int) and not isinstance(cap, bool) and cap > 0:
        return concurrency_key(cap)
    raise DataFormatError(f"{path}: field 'request_rate' is {rate!r} and 'max_concurrency' "
                          f"{cap!r}: no fixed level to key on")


def _throughput(row: dict[str, Any], path: Path) -> dict[str, Any]:
    duration = number(need(row, path, "duration"), path, "duration") or 0.0
    completed = number(need(row, path, "completed"), path, "completed") or 0.0
    out = number(need(row, path, "total_output_tokens"), path, "total_output_tokens") or 0.0
    return {"wall_s": duration, "rps": completed / duration if duration else None,
            "output_tok_s": out / duration if duration else None, "served_concurrency": None}


def _summary(row: dict[str, Any], path: Path, key: LevelKey,
             own: dict[str, Any]) -> LevelSummary:
    """Without details: end-to-end latency statistics, defined as servecap's."""
    fields: dict[str, Any] = {k: v for k, v in own.items() if v is not None}
    for stat, theirs in (("mean", "mean_e2el_ms"), ("p50", "median_e2el_ms"),
                         ("p90", "p90_e2el_ms"), ("p99", "p99_e2el_ms")):
        value = number(row.get(theirs), path, theirs, True)
        if value is not None:
            fields[f"latency_{stat}_s"] = value / 1e3
    fields["n_ok"] = int(number(row.get("completed"), path, "completed") or 0)
    failed = number(row.get("failed"), path, "failed", True)
    if failed is not None:
        fields["n_failed"] = int(failed)
        fields["n_requests"] = fields["n_ok"] + int(failed)
        fields["error_rate"] = failed / fields["n_requests"] if fields["n_requests"] else None
    return LevelSummary.for_key(key, **fields)
