"""GuideLLM's `benchmarks.json` (report version 2): one benchmark per level, every request kept.

Each request gives its start, first and last token iteration and end (seconds since the
epoch), its token counts and how many iterations (token-bearing chunks) it streamed, so it
becomes a servecap record and servecap computes its own statistics. GuideLLM keeps no
per-chunk arrival times: ITL is exact (first to last token over the tokens after the first
chunk), the chunk-gap distribution is not there. docs/formats/guidellm.md has the table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servecap.core import json_input
from servecap.core.errors import DataFormatError
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.storage.formats.imported import (
    NS_PER_S,
    ImportedLevel,
    ImportedRun,
    check_version,
    chunk_record,
    concurrency_key,
    failed_record,
    need,
    number,
    rate_key,
)
from servecap.storage.safe_files import read_text_file

NAME = "guidellm"
LABEL = "GuideLLM benchmarks.json"
SUPPORTED = ("2",)
READ_LIMIT = 512 * 1024 * 1024

UNMAPPED = [
    "chunk gaps: GuideLLM keeps no per-chunk arrival times, so the chunk-gap distribution "
    "is missing; ITL is from the first and last token iterations",
    "time_per_output_token_ms, inter_token_latency_ms, tokens_per_second, "
    "output_tokens_per_second (GuideLLM's per-request figures): servecap computes its own "
    "from the timings instead",
    "request_start_time: GuideLLM stamps it when its client starts the HTTP call, "
    "servecap's sent_at when the request's last byte is written",
    "request_dispatch_delay, request_scheduled_latency, turn_* delays: no servecap field",
]


def detects(path: Path, head: str) -> bool:
    return path.is_file() and '"guidellm_version"' in head


def read(path: Path) -> ImportedRun:
    text = read_text_file(path, "GuideLLM report", limit=READ_LIMIT)
    data = json_input.loads(text, max_depth=64)
    if not isinstance(data, dict):
        raise DataFormatError(f"{path}: a GuideLLM report is a JSON object")
    check_version(path, "GuideLLM report", need(data, path, "metadata.version"), SUPPORTED)
    benchmarks = need(data, path, "benchmarks")
    if not isinstance(benchmarks, list) or not benchmarks:
        raise DataFormatError(f"{path}: field 'benchmarks' holds no benchmark")
    unmapped = list(UNMAPPED)
    levels = [_level(b, path, i, unmapped) for i, b in enumerate(benchmarks)]
    keys = [level.key for level in levels]
    if len(set(keys)) != len(keys):
        raise DataFormatError(f"{path}: two benchmarks at one level ({', '.join(map(str, keys))})")
    return ImportedRun(
        name=f"guidellm-{path.parent.name or 'run'}", tool="GuideLLM",
        tool_version=str(need(data, path, "metadata.guidellm_version")),
        format=NAME, files=[path.name], levels=levels, unmapped=unmapped,
    )


def level_key(strategy: Any, path: Path, where: str) -> LevelKey:
    """A concurrent strategy is a concurrency level, a constant or Poisson one a rate level,
    a synchronous one c=1; a sweep's throughput run has no fixed level to key on."""
    if not isinstance(strategy, dict):
        raise DataFormatError(f"{path}: missing field '{where}.strategy'")
    style = strategy.get("type_")
    if style == "synchronous":
        return concurrency_key(1)
    if style == "concurrent":
        return concurrency_key(number(strategy.get("streams"), path, f"{where}.streams") or 0)
    if style in ("constant", "poisson"):
        return rate_key(number(strategy.get("rate"), path, f"{where}.rate") or 0)
    raise DataFormatError(
        f"{path}: field '{where}.strategy.type_' is {style!r}: servecap keys a level on a "
        "fixed concurrency (synchronous, concurrent) or rate (constant, poisson)"
    )


def _level(bench: Any, path: Path, index: int, unmapped: list[str]) -> ImportedLevel:
    where = f"benchmarks[{index}]"
    key = level_key(need(bench, path, "config.strategy"), path, f"{where}.config")
    requests = need(bench, path, "requests")
    rows: list[tuple[str, Any]] = []
    for status in ("successful", "errored", "incomplete"):
        items = requests.get(status) or []
        if not isinstance(items, list):
            raise DataFormatError(f"{path}: field '{where}.requests.{status}' is no list")
        rows.extend((status, item) for item in items)
    rows.sort(key=lambda item: _float(item[1].get("request_start_time")) if isinstance(
        item[1], dict) else 0.0)
    records = [_record(status, row, path, f"{where}.requests.{status}", key, i)
               for i, (status, row) in enumerate(rows)]
    if not records:
        raise DataFormatError(f"{path}: field '{where}.requests' holds no request")
    totals = bench.get("metrics", {}).get("request_totals", {})
    total = totals.get("total") if isinstance(totals, dict) else None
    if isinstance(total, int) and total > len(records):
        unmapped.append(f"{where}: GuideLLM kept {len(records)} of {total} requests "
                        "(sampled): servecap's statistics are over the kept ones")
    return ImportedLevel(key, records=records)


def _float(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _ns(value: Any, path: Path, field: str) -> int:
    return round((number(value, path, field) or 0.0) * NS_PER_S)


def _record(status: str, row: Any, path: Path, where: str, key: LevelKey,
            request_id: int) -> RequestRecord:
    if not isinstance(row, dict):
        raise DataFormatError(f"{path}: an entry of '{where}' is no object")
    start = _ns(row.get("request_start_time"), path, f"{where}.request_start_time")
    end = _ns(row.get("request_end_time"), path, f"{where}.request_end_time")
    if status != "successful":
        error = (row.get("info") or {}).get("error") or status
        record = failed_record(key, request_id, start, end, str(error))
        if status == "incomplete":  # cut off by the benchmark's end, not the server
            record.status, record.reason = "cancelled", "cancelled"
        return record
    timings = need(row, path, "info.timings")
    first = _ns(timings.get("first_token_iteration"), path, f"{where}.first_token_iteration")
    last = _ns(timings.get("last_token_iteration"), path, f"{where}.last_token_iteration")
    output = int(number(row.get("output_tokens"), path, f"{where}.output_tokens") or 0)
    prompt = row.get("prompt_tokens")
    record = chunk_record(key, request_id, start, first - start, [], end,
                          (prompt if isinstance(prompt, int) else None, output),
                          row.get("response_metrics") is not None)
    record.last_token_at = max(last, first)
    record.ended_at = max(record.ended_at or end, record.last_token_at)
    iterations = timings.get("token_iterations")
    if isinstance(iterations, int) and iterations > 0 and output:
        # DESIGN's rule without per-chunk usage: the first chunk holds N / chunks tokens
        record.chunk_tokens = [max(1, round(output / iterations))]
    return record
