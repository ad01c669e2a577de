"""llm-d Benchmark Report v0.2.1 (YAML or JSON): one report, or a folder of partials.

A report holds one load stage's aggregates (`results.request_performance.aggregate`), so
each becomes a summary-only level keyed on its standardized load: `rate_qps` a rate level,
a finite `concurrency` a concurrency level. A folder's partials are deep-merged by stage
first (`scenario.load.standardized.stage`), so a stack partial and a results partial of one
stage read as one report. docs/formats/benchmark-report-in.md has the table.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml

from servecap.core import json_input
from servecap.core.errors import DataFormatError
from servecap.core.level_key import LevelKey
from servecap.core.summary import LevelSummary
from servecap.storage.formats.imported import (
    ImportedLevel,
    ImportedRun,
    check_version,
    concurrency_key,
    need,
    number,
    rate_key,
)
from servecap.storage.safe_files import read_text_file

NAME = "benchmark-report"
LABEL = "llm-d Benchmark Report v0.2.1 (YAML/JSON file or folder of partials)"
SUPPORTED = ("0.2.1",)
READ_LIMIT = 64 * 1024 * 1024
SUFFIXES = (".yaml", ".yml", ".json")

UNMAPPED = [
    "tps (per user, N / latency): a report has no per-request TPS, so a TPS SLO cannot be "
    "judged on it",
    "inter_token_latency, time_per_output_token: the producing tool's definitions (which "
    "may divide by N - 1 or count the first token differently); kept under their own names "
    "in the notes, not as servecap's ITL",
    "p10/p25/p75/p95/p99p9 and min/max of each statistic: servecap keeps mean, P50, P90, P99",
    "observability, component_health, session_performance, time_series, scenario.stack: "
    "not imported",
]

# A report servecap wrote (`scenario.load.standardized.tool`) defines its normalized time
# per output token as each request's latency over its output tokens: 1/TPS, request by
# request. Its percentiles are then TPS's low tail (P90 of 1/TPS is TPS's P10, servecap's
# "P90 TPS"), equal up to the linear interpolation between the same two requests; its mean
# (the mean of 1/TPS) is not 1/(mean TPS), so the TPS mean stays unmapped.
SERVECAP = "servecap"
SERVECAP_TPS = ("tps (per user): from normalized_time_per_output_token, which servecap "
                "writes as 1/TPS per request: its P50, P90, P99 as TPS's P50 and low tails "
                "(within the interpolation between the same two requests); the TPS mean is "
                "not recoverable from the mean of 1/TPS")

# BR aggregate latency -> servecap column and the factor from BR's unit (s) to it.
_LATENCY = {
    "time_to_first_token": ("ttft", "_ms", 1e3),
    "request_latency": ("latency", "_s", 1.0),
}
_STATS = (("mean", "mean"), ("p50", "p50"), ("p90", "p90"), ("p99", "p99"))


def detects(path: Path, head: str) -> bool:
    if path.is_dir():
        return any(_is_report_head(p) for p in _partials(path))
    return path.suffix in SUFFIXES and _looks_like_report(head)


def _looks_like_report(head: str) -> bool:
    return ("request_performance" in head or "scenario" in head) and "version" in head


def _is_report_head(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return _looks_like_report(handle.read(65536))
    except OSError:
        return False


def _partials(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in SUFFIXES)


def load_report(path: Path) -> dict[str, Any]:
    text = read_text_file(path, "benchmark report", limit=READ_LIMIT)
    try:
        data = (json_input.loads(text, max_depth=64) if path.suffix == ".json"
                else yaml.safe_load(text))  # safe_load: a report is data, never objects
    except (ValueError, yaml.YAMLError) as exc:
        raise DataFormatError(f"{path}: not readable as a benchmark report ({exc})") from exc
    if not isinstance(data, dict):
        raise DataFormatError(f"{path}: a benchmark report is a mapping")
    check_version(path, "Benchmark Report", need(data, path, "version"), SUPPORTED)
    return data


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`extra` merged into a copy of `base`, mappings key by key (BR partials' rule)."""
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _stage(report: dict[str, Any]) -> object:
    load = report.get("scenario", {}).get("load", {}) if isinstance(
        report.get("scenario"), dict) else {}
    standard = load.get("standardized") if isinstance(load, dict) else None
    return standard.get("stage") if isinstance(standard, dict) else None


def read(path: Path) -> ImportedRun:
    files = _partials(path) if path.is_dir() else [path]
    reports = [(file, load_report(file)) for file in files]
    stages = merge_partials(reports)
    levels = [_level(report, source) for source, report in stages if "results" in report]
    if not levels:
        raise DataFormatError(f"{path}: missing field 'results' in every report")
    keys = [level.key for level in levels]
    if len(set(keys)) != len(keys):
        raise DataFormatError(f"{path}: two reports at one level ({', '.join(map(str, keys))})")
    standard = _standardized(stages[0][1])
    unmapped = list(UNMAPPED)
    if standard.get("tool") == SERVECAP:
        unmapped[0] = SERVECAP_TPS
    return ImportedRun(
        name=f"br-{path.stem}", tool=str(standard.get("tool") or "Benchmark Report"),
        tool_version=str(standard.get("tool_version") or "unknown"), format=NAME,
        files=[f.name for f in files], levels=levels, unmapped=unmapped,
        notes=_latency_notes(levels),
    )


def merge_partials(
    reports: list[tuple[Path, dict[str, Any]]],
) -> list[tuple[Path, dict[str, Any]]]:
    """Partials of one stage deep-merged; a partial that names no stage (the stack's, the
    run's) is merged into every stage, as BR partials are meant to combine."""
    shared: dict[str, Any] = {}
    stages: dict[object, tuple[Path, dict[str, Any]]] = {}
    for file, report in reports:
        stage = _stage(report)
        if stage is None and "results" not in report:
            shared = deep_merge(shared, report)
            continue
        first, merged = stages.get(stage, (file, {}))
        stages[stage] = (first, deep_merge(merged, report))
    return [(file, deep_merge(shared, report)) for file, report in stages.values()]


def _standardized(report: dict[str, Any]) -> dict[str, Any]:
    node = report.get("scenario", {})
    for part in ("load", "standardized"):
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return node if isinstance(node, dict) else {}


def level_key(report: dict[str, Any], path: Path) -> LevelKey:
    """A stage's rate (`rate_qps`) makes a rate level; else a finite `concurrency`."""
    standard = _standardized(report)
    rate = standard.get("rate_qps")
    if isinstance(rate, int | float) and math.isfinite(rate) and rate > 0:
        return rate_key(rate)
    streams = standard.get("concurrency")
    if isinstance(streams, int | float) and math.isfinite(streams) and streams >= 1:
        return concurrency_key(streams)
    raise DataFormatError(f"{path}: field 'scenario.load.standardized' has no finite "
                          "rate_qps or concurrency to key a level on")


def _level(report: dict[str, Any], path: Path) -> ImportedLevel:
    key = level_key(report, path)
    aggregate = need(report, path, "results.request_performance.aggregate")
    fields: dict[str, Any] = {}
    latency = aggregate.get("latency") or {}
    for theirs, (metric, unit, factor) in _LATENCY.items():
        stats = latency.get(theirs) or {}
        for ours, their_stat in _STATS:
            value = number(stats.get(their_stat), path, f"latency.{theirs}.{their_stat}", True)
            if value is not None:
                fields[f"{metric}_{ours}{unit}"] = value * factor
    requests = aggregate.get("requests") or {}
    total = number(requests.get("total"), path, "requests.total", True)
    failed = number(requests.get("failures"), path, "requests.failures", True)
    if total is not None:
        fields["n_requests"] = int(total)
        if failed is not None:
            fields["n_failed"] = int(failed)
            fields["n_ok"] = int(total - failed)
            fields["error_rate"] = failed / total if total else None
    throughput = aggregate.get("throughput") or {}
    for theirs, ours in (("request_rate", "rps"), ("output_token_rate", "output_tok_s")):
        stats = throughput.get(theirs) or {}
        value = number(stats.get("mean"), path, f"throughput.{theirs}.mean", True)
        if value is not None:
            fields[ours] = value
    if _standardized(report).get("tool") == SERVECAP:
        fields.update(_servecap_tps(latency, path))
    summary = LevelSummary.for_key(key, **fields)
    return ImportedLevel(key, summary=summary,
                         overrides={"itl": latency.get("inter_token_latency")})


def _servecap_tps(latency: dict[str, Any], path: Path) -> dict[str, float]:
    """TPS's P50 and low tails from a servecap report's 1/TPS percentiles (see `SERVECAP`)."""
    ntpot = latency.get("normalized_time_per_output_token") or {}
    tps = {}
    for ours, theirs in (("tps_p50", "p50"), ("tps_p90", "p90"), ("tps_p99", "p99")):
        value = number(ntpot.get(theirs), path, f"normalized_time_per_output_token.{theirs}",
                       True)
        if value is not None and value > 0:
            tps[ours] = 1.0 / value
    return tps


def _latency_notes(levels: list[ImportedLevel]) -> list[str]:
    """The producer's ITL, quoted under its own name rather than stored as servecap's."""
    notes = []
    for level in levels:
        itl = level.overrides.pop("itl", None)
        if isinstance(itl, dict) and isinstance(itl.get("mean"), int | float):
            notes.append(f"{level.key}: the report's inter_token_latency mean is "
                         f"{itl['mean'] * 1e3:.3f} ms (its tool's definition)")
    return notes
