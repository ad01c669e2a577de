"""AIPerf's `profile_export_aiperf.json`, with its per-request `profile_export.jsonl` beside it.

AIPerf runs one load per invocation (one concurrency or one rate), so each file is one
level. With the JSONL beside it every request becomes a servecap record (start and end
stamps in ns, TTFT, the gaps between its chunks) and servecap computes its own statistics;
without it the aggregates become a summary-only level. docs/formats/aiperf.md has the table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from servecap.core import json_input
from servecap.core.errors import DataFormatError
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary
from servecap.storage.formats.imported import (
    NS_PER_MS,
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

NAME = "aiperf"
LABEL = "AIPerf profile_export_aiperf.json (+ profile_export.jsonl)"
SUPPORTED = ("1.4",)
RECORDS_FILE = "profile_export.jsonl"
READ_LIMIT = 256 * 1024 * 1024

# Always differs from servecap, per-request or not: said in every AIPerf import.
DIFFERENCES = [
    "inter_token_latency: AIPerf divides by its own tokenizer's output count "
    "(output_token_count), servecap's ITL by the server's usage count; not used",
    "output_token_throughput_per_user: AIPerf's decode rate per user, not servecap's "
    "TPS (N / latency); not used",
    "time_to_second_token, prefill_throughput_per_user, http_req_* (connection timing), "
    "effective_* and tokens_in_flight: no servecap field",
    "server_metrics, gpu_telemetry: not imported",
]
SUMMARY_ONLY = [
    "per-request data: no profile_export.jsonl beside the file, so TPS (N / latency), ITL, "
    "chunk gaps and the P90 TPS tail are missing",
    "output_token_throughput, total_output_tokens: counted with AIPerf's tokenizer "
    "(output_token_count) unless it ran with --use-server-token-count; not used",
]


def detects(path: Path, head: str) -> bool:
    return path.is_file() and '"aiperf_version"' in head


def load_json(path: Path) -> dict[str, Any]:
    data = json_input.loads(read_text_file(path, "AIPerf export", limit=READ_LIMIT),
                            max_depth=64)
    if not isinstance(data, dict):
        raise DataFormatError(f"{path}: an AIPerf export is a JSON object")
    return data


def read(path: Path) -> ImportedRun:
    data = load_json(path)
    check_version(path, "AIPerf profile export", need(data, path, "schema_version"), SUPPORTED)
    key = level_key(data, path)
    beside = path.parent / RECORDS_FILE
    files = [f"{path.parent.name}/{path.name}"]  # AIPerf's names repeat for every level
    unmapped = list(DIFFERENCES)
    if beside.is_file():
        level = ImportedLevel(key, records=read_records(beside, key))
        files.append(f"{path.parent.name}/{beside.name}")
    else:
        level = ImportedLevel(key, summary=aggregate_summary(data, path, key))
        unmapped += SUMMARY_ONLY
    return ImportedRun(
        name=f"aiperf-{data.get('benchmark_id') or path.parent.name}",
        tool="AIPerf", tool_version=str(need(data, path, "aiperf_version")),
        format=NAME, files=files, levels=[level], unmapped=unmapped,
    )


def level_key(data: dict[str, Any], path: Path) -> LevelKey:
    """The profiling phase's load: its request rate where it set one, else its concurrency."""
    phases = need(data, path, "input_config.phases")
    profiling = [p for p in phases if isinstance(p, dict) and p.get("name") == "profiling"]
    if not profiling:
        raise DataFormatError(f"{path}: field 'input_config.phases' has no profiling phase")
    phase = profiling[0]
    rate = phase.get("request_rate")
    if rate is not None:
        return rate_key(number(rate, path, "input_config.phases.request_rate") or 0)
    streams = number(phase.get("concurrency"), path, "input_config.phases.concurrency")
    return concurrency_key(streams or 0)


def _metric(metrics: dict[str, Any], name: str, path: Path, line: int) -> Any:
    entry = metrics.get(name)
    if not isinstance(entry, dict) or "value" not in entry:
        raise DataFormatError(f"{path}:{line}: missing field 'metrics.{name}.value'")
    return entry["value"]


def read_records(path: Path, key: LevelKey) -> list[RequestRecord]:
    """Every profiling request of the JSONL as a record (warm-up requests are left out)."""
    records: list[RequestRecord] = []
    text = read_text_file(path, "AIPerf records", limit=READ_LIMIT)
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        row = json_input.loads(raw, max_depth=16)
        meta = row.get("metadata") if isinstance(row, dict) else None
        if not isinstance(meta, dict):
            raise DataFormatError(f"{path}:{line}: missing field 'metadata'")
        if meta.get("benchmark_phase", "profiling") != "profiling":
            continue
        records.append(_record(row, meta, path, line, key, len(records)))
    if not records:
        raise DataFormatError(f"{path}: no profiling requests")
    return records


def _stamp(meta: dict[str, Any], name: str, path: Path, line: int) -> int:
    value = meta.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise DataFormatError(f"{path}:{line}: field 'metadata.{name}' is {value!r}, "
                              "not a timestamp in ns")
    return value


def _record(row: dict[str, Any], meta: dict[str, Any], path: Path, line: int,
            key: LevelKey, request_id: int) -> RequestRecord:
    start = _stamp(meta, "request_start_ns", path, line)
    end = _stamp(meta, "request_end_ns", path, line)
    metrics = row.get("metrics") or {}
    if row.get("error") or meta.get("was_cancelled"):
        return failed_record(key, request_id, start, end, str(row.get("error") or "cancelled"))
    ttft_ms = number(_metric(metrics, "time_to_first_token", path, line), path,
                     f"line {line}: time_to_first_token") or 0.0
    gaps = _metric(metrics, "inter_chunk_latency", path, line)
    if not isinstance(gaps, list):
        raise DataFormatError(f"{path}:{line}: field 'metrics.inter_chunk_latency' is no list")
    gaps_ns = [round((number(g, path, f"line {line}: inter_chunk_latency") or 0) * NS_PER_MS)
               for g in gaps]
    usage = metrics.get("usage_completion_tokens")
    from_usage = isinstance(usage, dict)  # the server's count, as servecap's runs use
    count = (usage.get("value") if isinstance(usage, dict)
             else _metric(metrics, "output_token_count", path, line))
    prompt = (metrics.get("usage_prompt_tokens") or metrics.get("input_sequence_length") or {})
    tokens = (_int(prompt.get("value")), int(number(count, path, f"line {line}: tokens") or 0))
    return chunk_record(key, request_id, start, round(ttft_ms * NS_PER_MS), gaps_ns, end,
                        tokens, from_usage)


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


# AIPerf aggregate -> servecap column, with the unit factor (ms stays ms; ms -> s).
_AGGREGATES = {
    "time_to_first_token": ("ttft", "_ms", 1.0),
    "request_latency": ("latency", "_s", 1e-3),
}


def aggregate_summary(data: dict[str, Any], path: Path, key: LevelKey) -> LevelSummary:
    """The level from AIPerf's aggregates alone: only fields defined as servecap's."""
    fields: dict[str, Any] = {}
    for theirs, (metric, unit, factor) in _AGGREGATES.items():
        stats = need(data, path, theirs)
        for stat, their_stat in (("mean", "avg"), ("p50", "p50"), ("p90", "p90"), ("p99", "p99")):
            value = number(stats.get(their_stat), path, f"{theirs}.{their_stat}", True)
            if value is not None:
                fields[f"{metric}_{stat}{unit}"] = value * factor
    total = number(need(data, path, "request_count.avg"), path, "request_count.avg") or 0
    fields["n_requests"] = int(total)
    completed = data.get("completed_request_count", {}).get("avg", total)
    fields["n_ok"] = int(number(completed, path, "completed_request_count.avg") or 0)
    fields["n_failed"] = fields["n_requests"] - fields["n_ok"]
    fields["error_rate"] = fields["n_failed"] / total if total else None
    fields["rps"] = number(need(data, path, "request_throughput.avg"), path,
                           "request_throughput.avg")
    fields["wall_s"] = number(need(data, path, "benchmark_duration.avg"), path,
                              "benchmark_duration.avg")
    return LevelSummary.for_key(key, **fields)
