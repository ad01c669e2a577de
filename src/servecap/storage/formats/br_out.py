"""llm-d Benchmark Report v0.2.1 partials out: one JSON file a level, in the run's `br/`.

A partial holds only what servecap measured itself, computed from the level's own
per-request records with servecap's definitions (docs/formats/benchmark-report.md has the
field-by-field mapping and what is left out, and why): `run` (the run's id as `eid`, a uid
per level, the level's time span) and `results` (request performance, session performance
where the requests belong to users' conversations, and what the server's `/metrics` gave).
No `scenario`: the stack is the deployer's to describe, and a partial without nulls deep-merges
with theirs. The records a level's statistics count are the ones its summary counts (no
warm-up; the kind's steady-state window, as `load_run` recomputes them), so the partial's
TTFT p90 is the summary's `ttft_p90_ms` in seconds.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servecap.core.errors import ServecapError, UserInputError
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.request_metrics import RequestMetrics, chunk_gaps_ns, request_metrics
from servecap.core.summary import LevelSummary
from servecap.kinds.registry import kind_of
from servecap.kinds.window import apply_window
from servecap.storage.formats.br_load import scenario_load
from servecap.storage.formats.br_sessions import session_performance
from servecap.storage.formats.br_stats import (
    iso_duration,
    iso_time,
    one_value,
    statistics,
    strip_nulls,
)
from servecap.storage.run_dir import Run, write_run_info
from servecap.storage.runs import stored_windows
from servecap.storage.safe_files import make_dir, safe_name, write_atomic

BR_DIR = "br"
BR_VERSION = "0.2.1"
# The one component servecap observes: the server it sent to. BR's `component_label` names
# a `scenario.stack[].metadata.label`; rename it to your stack's label when you merge.
COMPONENT_LABEL = "server"
NS_PER_S = 1e9


@dataclass(frozen=True)
class Done:
    """A successful request and its metrics (a request `request_metrics` could measure)."""

    record: RequestRecord
    metrics: RequestMetrics


def counted_rows(run: Run) -> dict[LevelKey, list[RequestRecord]]:
    """Each level's records that its statistics count: no warm-up, and only those inside
    the kind's steady-state window (the run's stored one, as a recomputed summary uses)."""
    by_level: dict[LevelKey, list[RequestRecord]] = {}
    for record in run.iter_records():
        if not record.warmup:
            by_level.setdefault(record.key, []).append(record)
    windows = stored_windows(run.info)
    for key, rows in by_level.items():
        window = windows.get(kind_of(key).name)
        if window is not None:
            by_level[key] = apply_window(rows, window).kept
    return by_level


def _all_usage(done: list[Done]) -> bool:
    """Token counts are the server's (`usage`) for every success, not counted from chunks:
    only then are lengths, token rates and per-token times servecap's to vouch for."""
    return bool(done) and all(d.record.token_source == "usage" for d in done)


def _one_token_a_chunk(done: list[Done]) -> bool:
    """Every token-bearing chunk carried one token, so a chunk gap is an inter-token gap."""
    for d in done:
        record = d.record
        sizes = record.chunk_tokens or ([] if d.metrics.output_tokens != len(record.chunk_at)
                                        else [1])
        if not sizes or any(size != 1 for size in sizes):
            return False
    return bool(done)


def _requests(rows: list[RequestRecord], done: list[Done], usage: bool) -> dict[str, Any]:
    prompts = [d.record.prompt_tokens for d in done if d.record.prompt_tokens is not None]
    return {
        "total": len(rows),
        "failures": sum(1 for r in rows if r.status == "failed"),
        "incomplete": sum(1 for r in rows if r.status == "cancelled"),
        "input_length": statistics(prompts, "count") if usage else None,
        "output_length": (
            statistics([d.metrics.output_tokens for d in done], "count") if usage else None
        ),
    }


def _latency(done: list[Done], usage: bool) -> dict[str, Any]:
    metrics = [d.metrics for d in done]
    block: dict[str, Any] = {
        "time_to_first_token": statistics([m.ttft_ns / NS_PER_S for m in metrics], "s"),
        "request_latency": statistics([m.latency_ns / NS_PER_S for m in metrics], "s"),
    }
    if not usage:
        return block
    block["time_per_output_token"] = statistics(
        [m.itl_ns / NS_PER_S for m in metrics if m.itl_ns is not None], "s/token")
    block["normalized_time_per_output_token"] = statistics(
        [m.latency_ns / NS_PER_S / m.output_tokens for m in metrics if m.output_tokens > 0],
        "s/token")
    if _one_token_a_chunk(done):
        gaps = [g / NS_PER_S for d in done for g in chunk_gaps_ns(d.record)]
        block["inter_token_latency"] = statistics(gaps, "s/token")
    return block


def wall_s(rows: list[RequestRecord]) -> float | None:
    """The level's wall time, first send to last end (metrics.level's, the throughputs')."""
    sent = [r.sent_at for r in rows if r.sent_at is not None]
    ended = [r.ended_at for r in rows if r.ended_at is not None]
    if not sent or not ended or max(ended) <= min(sent):
        return None
    return (max(ended) - min(sent)) / NS_PER_S


def _throughput(rows: list[RequestRecord], done: list[Done], usage: bool) -> dict[str, Any]:
    wall = wall_s(rows)
    if wall is None:
        return {}
    block: dict[str, Any] = {"request_rate": one_value(len(done) / wall, "queries/s")}
    if usage:
        output = sum(d.metrics.output_tokens for d in done) / wall
        prompts = [d.record.prompt_tokens for d in done]
        block["output_token_rate"] = one_value(output, "tokens/s")
        if all(p is not None for p in prompts):
            inputs = sum(p for p in prompts if p is not None) / wall
            block["input_token_rate"] = one_value(inputs, "tokens/s")
            block["total_token_rate"] = one_value(inputs + output, "tokens/s")
    return block


def request_performance(rows: list[RequestRecord]) -> dict[str, Any]:
    """`results.request_performance` of one level's counted records."""
    done = [Done(r, m) for r in rows if (m := request_metrics(r)) is not None]
    usage = _all_usage(done)
    return {"aggregate": {
        "requests": _requests(rows, done, usage),
        "latency": _latency(done, usage),
        "throughput": _throughput(rows, done, usage),
    }}


def _gauge(mean: float | None, peak: float | None, units: str, scale: float = 1.0
           ) -> dict[str, Any] | None:
    if mean is None:
        return None
    return {"units": units, "mean": mean * scale, "max": None if peak is None else peak * scale}


def observability(summary: LevelSummary) -> dict[str, Any] | None:
    """What the server's `/metrics` gave over the level: its gauges' mean and max (KV-cache
    usage as a percent, servecap keeps it 0..1) and its prefix-cache hit rate (from
    `/metrics`, else from the cached tokens the server reported in usage); with
    `--power-metrics`, the mean power over the level's token window (only where the scrape
    covered that window: `metrics.energy`)."""
    hit_rate = summary.server_prefix_hit_rate
    if hit_rate is None:
        hit_rate = summary.prefix_hit_rate_usage
    power = (summary.energy or {}).get("power_mean_w")
    aggregate = {
        "running_requests": _gauge(summary.server_running_mean, summary.server_running_max,
                                   "count"),
        "waiting_requests": _gauge(summary.server_waiting_mean, summary.server_waiting_max,
                                   "count"),
        "kv_cache_usage": _gauge(summary.server_kv_usage_mean, summary.server_kv_usage_max,
                                 "percent", 100.0),
        "cache_hit_rate": _gauge(hit_rate, None, "percent", 100.0),
        "power_consumption": _gauge(power, None, "Watts"),
    }
    if all(v is None for v in aggregate.values()):
        return None
    return {"components": [{"component_label": COMPONENT_LABEL, "aggregate": aggregate}]}


def _run_block(run: Run, key: LevelKey, rows: list[RequestRecord]) -> dict[str, Any]:
    eid = run.path.name  # the run directory's name: unique, and what every view calls it
    block: dict[str, Any] = {
        "uid": uuid.uuid5(uuid.NAMESPACE_URL, f"servecap:{eid}:{key}").hex,  # same on re-export
        "eid": eid,
    }
    info = run.info
    sent = [r.sent_at for r in rows if r.sent_at is not None]
    ended = [r.ended_at for r in rows if r.ended_at is not None]
    if info.anchor_wall_ns is None or info.anchor_perf_ns is None or not sent or not ended:
        return block
    start, end = min(sent), max(ended)
    offset = info.anchor_wall_ns - info.anchor_perf_ns  # perf_counter ns -> epoch ns
    block["time"] = {
        "start": iso_time(start + offset), "end": iso_time(end + offset),
        "duration": iso_duration((end - start) / NS_PER_S),
    }
    return block


def level_partial(run: Run, summary: LevelSummary, rows: list[RequestRecord], stage: int = 0
                  ) -> dict[str, Any]:
    """The BR v0.2.1 partial of one level, nulls stripped."""
    results = {
        "request_performance": request_performance(rows),
        "session_performance": session_performance(rows),
        "observability": observability(summary),
    }
    document = {"version": BR_VERSION, "run": _run_block(run, summary.key, rows),
                "scenario": {"load": scenario_load(run, summary, rows, stage)},
                "results": results}
    stripped: dict[str, Any] = strip_nulls(document)
    return stripped


def partial_name(index: int, key: LevelKey) -> str:
    """`01-c-4.json`: the level's place in the run (so a listing sorts as the run went) and
    its key as a safe file name."""
    return f"{index:02d}-{safe_name(str(key), 'level')}.json"


def run_partials(run: Run) -> list[tuple[str, dict[str, Any]]]:
    """(file name, partial) for each finished level of a measured run with records.

    A partial level (stopped before all its requests were sent) is left out: BR has no
    field to say so, and a reader would take it for a whole stage. So is a level whose
    summary counted other records than its kind's window keeps (a capacity probe's stop
    rule names its own window, which run.json does not keep): its partial would not be its
    summary's numbers."""
    if run.info.source != "measured":
        raise UserInputError(
            f"{run.path} was imported, not measured by servecap: its numbers are another "
            "tool's, so servecap does not write them as its own Benchmark Report")
    if not run.has_records:
        raise UserInputError(
            f"{run.path} has no requests.jsonl: Benchmark Report partials are computed from "
            "a run's per-request records")
    rows_by_level = counted_rows(run)
    partials = []
    for index, summary in enumerate(run.levels, start=1):
        rows = rows_by_level.get(summary.key)
        same = summary.n_requests is None or summary.n_requests == len(rows or [])
        if rows and same and not summary.partial:
            partials.append((partial_name(index, summary.key),
                             level_partial(run, summary, rows, index - 1)))
    return partials


def write_run_partials(run: Run, out_dir: Path | None = None) -> list[Path]:
    """Write the run's partials into `out_dir` (default: the run's own `br/`)."""
    partials = run_partials(run)
    if not partials:
        return []  # no finished level: no empty folder
    target = make_dir(out_dir if out_dir is not None else run.path / BR_DIR)
    return [
        write_atomic(target / name, json.dumps(doc, indent=2) + "\n") for name, doc in partials
    ]


def write_partials_or_note(run: Run) -> str | None:
    """Write the run's partials at its end; on failure, a note saying why, never an error.

    What was measured is already on disk (requests, summaries, run.json): a partial that
    cannot be written (a full disk, a read-only folder) must not turn the run into a failure.
    The note goes into run.json, where every view of the run shows it."""
    try:
        write_run_partials(run)
    except (OSError, ServecapError, ValueError) as exc:
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        note = f"Benchmark Report partials ({BR_DIR}/) not written: {detail}"
        run.info.notes.append(note)
        with contextlib.suppress(OSError):
            write_run_info(run.path, run.info)
        return note
    return None
