"""SGLang `bench_serving.py --output-file X.jsonl --output-details`: one line per run (level).

With `--output-details` a line keeps every request's TTFT, the gaps between its chunks
(`itls`), its input and output lengths and its error, so each becomes a servecap record
and servecap computes its own TTFT, ITL and TPS. It keeps no send times and no per-request
end: each request is stored as sent at 0 and ending at its last chunk, and the level's
wall time, rates and served concurrency are the line's own (`duration`, `concurrency`).
A line without details is a summary-only level. docs/formats/sglang-bench.md has the table.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from servecap.core import json_input
from servecap.core.errors import DataFormatError
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary
from servecap.storage.formats.imported import (
    NS_PER_S,
    ImportedLevel,
    ImportedRun,
    chunk_record,
    concurrency_key,
    failed_record,
    need,
    number,
    rate_key,
)
from servecap.storage.safe_files import read_text_file

NAME = "sglang-bench"
LABEL = "SGLang bench_serving output (JSONL, --output-details)"
READ_LIMIT = 256 * 1024 * 1024

PER_REQUEST_GAPS = [
    "send times: bench_serving keeps none, so every request is stored as sent at 0 "
    "(no timeline, no send lateness); wall time, rps, output tok/s and served concurrency "
    "are the file's own (duration, completed, total_output_tokens, concurrency)",
    "latency: bench_serving keeps no per-request end, so latency (and TPS = N / latency) "
    "runs to the last chunk, not the stream's end",
    "mean_tpot_ms, *_itl_ms, *_e2e_latency_ms, *_ttft_ms: bench_serving's aggregates; "
    "servecap computes its own from the per-request data",
    "total_output_tokens_retokenized, generated_texts, accept_length: not imported",
]
SUMMARY_GAPS = [
    "per-request data: the line has no --output-details arrays, so P90 TTFT, TPS and ITL "
    "are missing",
    "mean_itl_ms, mean_tpot_ms: bench_serving's ITL is the pooled chunk gap and its TPOT "
    "(latency - TTFT) / (output - 1) per request: neither is servecap's ITL; not used",
]


def detects(path: Path, head: str) -> bool:
    first = head.lstrip().split("\n", 1)[0]
    return path.is_file() and '"backend"' in first and '"mean_ttft_ms"' in first


def read(path: Path) -> ImportedRun:
    text = read_text_file(path, "SGLang bench_serving output", limit=READ_LIMIT)
    levels: list[ImportedLevel] = []
    detailed = True
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        row = json_input.loads(raw, max_depth=16)
        if not isinstance(row, dict):
            raise DataFormatError(f"{path}:{line}: a line is a JSON object")
        level = _level(row, path, line)
        detailed = detailed and bool(level.records)
        if any(other.key == level.key for other in levels):
            raise DataFormatError(f"{path}:{line}: a second run at {level.key}")
        levels.append(level)
    if not levels:
        raise DataFormatError(f"{path}: no runs")
    return ImportedRun(
        name=f"sglang-bench-{path.stem}", tool="SGLang bench_serving",
        tool_version="", format=NAME,  # bench_serving records no version of its own
        files=[path.name], levels=levels,
        unmapped=PER_REQUEST_GAPS if detailed else PER_REQUEST_GAPS[2:] + SUMMARY_GAPS,
    )


def level_key(row: dict[str, Any], path: Path, line: int) -> LevelKey:
    """A finite request rate is a rate level (a concurrency cap beside it is the level's
    cap); an infinite rate with a max concurrency is a concurrency level."""
    rate = row.get("request_rate")
    cap = row.get("max_concurrency")
    if isinstance(rate, int | float) and math.isfinite(rate) and rate > 0:
        return rate_key(rate)
    if isinstance(cap, int) and cap > 0:
        return concurrency_key(cap)
    raise DataFormatError(f"{path}:{line}: field 'request_rate' is {rate!r} and "
                          f"'max_concurrency' {cap!r}: no fixed level to key on")


def _level(row: dict[str, Any], path: Path, line: int) -> ImportedLevel:
    key = level_key(row, path, line)
    duration = number(need(row, path, "duration"), path, f"line {line}: duration") or 0.0
    completed = number(need(row, path, "completed"), path, f"line {line}: completed") or 0.0
    out_tokens = number(need(row, path, "total_output_tokens"), path,
                        f"line {line}: total_output_tokens") or 0.0
    own = {
        "wall_s": duration,
        "rps": completed / duration if duration else None,
        "output_tok_s": out_tokens / duration if duration else None,
        "served_concurrency": number(row.get("concurrency"), path,
                                     f"line {line}: concurrency", True),
    }
    if "ttfts" not in row:
        return ImportedLevel(key, summary=_summary(row, path, line, key, own))
    return ImportedLevel(key, records=_records(row, path, line, key), overrides=own)


def _records(row: dict[str, Any], path: Path, line: int, key: LevelKey) -> list[RequestRecord]:
    return detail_records(row, path, f"{path}:{line}", key, skip_empty_first=False)


def detail_records(row: dict[str, Any], path: Path, where: str, key: LevelKey,
                   skip_empty_first: bool) -> list[RequestRecord]:
    """Records from the per-request arrays bench_serving and `vllm bench serve` share.

    With `skip_empty_first`, a request with one chunk more than tokens had a first chunk
    that carried none (the role-only chunk a chat stream opens with, which vLLM's client
    counts as its TTFT): its first token came one gap later, as servecap defines TTFT."""
    names = ("ttfts", "itls", "output_lens", "input_lens", "errors")
    arrays = {name: need(row, path, name) for name in names}
    sizes = {len(a) if isinstance(a, list) else -1 for a in arrays.values()}
    if len(sizes) != 1 or -1 in sizes:
        raise DataFormatError(f"{where}: fields {', '.join(names)} are not lists of one length")
    records = []
    for i in range(sizes.pop()):
        if arrays["errors"][i]:
            records.append(failed_record(key, i, 0, 0, str(arrays["errors"][i])))
            continue
        ttft = number(arrays["ttfts"][i], path, f"ttfts[{i}]") or 0.0
        gaps = arrays["itls"][i]
        if not isinstance(gaps, list):
            raise DataFormatError(f"{where}: field 'itls[{i}]' is no list")
        secs = [number(g, path, f"itls[{i}]") or 0.0 for g in gaps]
        output = int(number(arrays["output_lens"][i], path, f"output_lens[{i}]") or 0)
        if skip_empty_first and secs and len(secs) == output:
            ttft, secs = ttft + secs[0], secs[1:]
        tokens = (_count(arrays["input_lens"][i]), output)
        records.append(chunk_record(key, i, 0, round(ttft * NS_PER_S),
                                    [round(g * NS_PER_S) for g in secs], None, tokens, True))
    return records


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _summary(row: dict[str, Any], path: Path, line: int, key: LevelKey,
             own: dict[str, Any]) -> LevelSummary:
    """A line without details: TTFT and latency statistics defined as servecap's."""
    fields: dict[str, Any] = dict(own)
    for theirs, ours, factor in (
        ("mean_ttft_ms", "ttft_mean_ms", 1.0), ("median_ttft_ms", "ttft_p50_ms", 1.0),
        ("p99_ttft_ms", "ttft_p99_ms", 1.0), ("mean_e2e_latency_ms", "latency_mean_s", 1e-3),
        ("median_e2e_latency_ms", "latency_p50_s", 1e-3),
        ("p99_e2e_latency_ms", "latency_p99_s", 1e-3),
    ):
        value = number(row.get(theirs), path, f"line {line}: {theirs}", True)
        if value is not None:
            fields[ours] = value * factor
    fields["n_ok"] = int(number(row.get("completed"), path, f"line {line}: completed") or 0)
    return LevelSummary.for_key(key, **fields)
