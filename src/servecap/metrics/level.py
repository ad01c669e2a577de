"""Summarise one level from its records (and what its observers saw, e.g. client health)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from servecap.core.level_key import LevelKey
from servecap.core.records import ClientHealth, RequestRecord
from servecap.core.request_metrics import RequestMetrics, chunk_gaps_ns, request_metrics
from servecap.core.summary import DISTRIBUTION_METRICS, HIGHER_IS_BETTER, LevelSummary, column
from servecap.kinds.base import LoadKind
from servecap.kinds.registry import kind_of
from servecap.kinds.window import Window, Windowed, apply_window
from servecap.metrics.energy import POWER_WINDOW, level_energy
from servecap.metrics.intervals import level_intervals
from servecap.metrics.lengths import lateness_fields, length_fields, length_histograms
from servecap.metrics.prefix_hits import prefix_fields
from servecap.metrics.schedule import schedule_fields, send_gap_fields
from servecap.stats.percentiles import describe, small_sample_warnings

NS_PER_MS = 1e6
NS_PER_S = 1e9


def _metric_values(metrics: list[RequestMetrics], records: list[RequestRecord]) -> dict[str, list]:
    gaps = [g for r in records if r.ok for g in chunk_gaps_ns(r)]
    return {
        "ttft": [m.ttft_ns / NS_PER_MS for m in metrics],
        "ttfa": [m.ttfa_ns / NS_PER_MS for m in metrics if m.ttfa_ns is not None],
        "itl": [m.itl_ns / NS_PER_MS for m in metrics if m.itl_ns is not None],
        "chunk_gap": [g / NS_PER_MS for g in gaps],
        "tps": [m.tps for m in metrics if m.tps is not None],
        "decode_tps": [m.decode_tps for m in metrics if m.decode_tps is not None],
        "latency": [m.latency_ns / NS_PER_S for m in metrics],
    }


def _wall_ns(records: list[RequestRecord]) -> int | None:
    sent = [r.sent_at for r in records if r.sent_at is not None]
    ended = [r.ended_at for r in records if r.ended_at is not None]
    if not sent or not ended:
        return None
    return max(ended) - min(sent)


# A level whose TTFT holds more of the client's own delay than this is not trustworthy.
CLIENT_DELAY_BOUND_MS = 5.0
CLIENT_DELAY_BOUND_SHARE = 0.05  # of the TTFT mean, for slow servers


def summarise_level(
    level: LevelKey | int,
    records: Iterable[RequestRecord],
    observed: Mapping[str, Any] | ClientHealth | None = None,
    planned: int | None = None,
    window: Window | None = None,
) -> LevelSummary:
    """The LevelSummary of one level's (non-warm-up) records; a bare int is a concurrency.

    `observed` holds the fields the level's observers added (client health, ...); `planned`,
    the requests the level was to send, marks it partial when it stopped short (or had
    requests cancelled). With a `window` (every open-loop level has one), the statistics
    count only the records the window keeps, and the schedule columns (lateness,
    `ttft_sched`, rates) are filled.
    """
    key = level if isinstance(level, LevelKey) else LevelKey.closed(level)
    kind = kind_of(key)
    every = list(records)
    rows = [r for r in every if not r.warmup]
    partial = None
    if planned is not None:  # of everything sent, before the window leaves any out
        partial = len(rows) < planned or any(r.status == "cancelled" for r in rows)
    windowed = apply_window(rows, window) if window is not None else None
    if windowed is not None:
        rows = windowed.kept
    metrics = [m for m in map(request_metrics, rows) if m is not None]
    failed = [r for r in rows if r.status == "failed"]
    reasons = Counter(r.reason or "unknown" for r in rows if not r.ok)
    fields: dict[str, Any] = {
        "n_requests": len(rows),
        "n_ok": len(metrics),
        "n_failed": len(failed),
        "failures": dict(reasons),
        "error_rate": len(failed) / len(rows) if rows else None,
        "warnings": small_sample_warnings(len(metrics)) + _token_warnings(rows),
        **_counts(rows),
    }
    if partial is not None:
        fields["partial"] = partial
    values_by_metric = _metric_values(metrics, rows)
    for metric, values in values_by_metric.items():
        stats = describe(values, higher_is_better=metric in HIGHER_IS_BETTER)
        fields.update({column(metric, stat): value for stat, value in stats.items()})
    fields["intervals"] = level_intervals(values_by_metric)
    fields.update(_throughput(rows, metrics))
    fields.update(length_fields(rows))
    if kind.scheduled():
        fields.update(lateness_fields(rows))
    fields["length_histograms"] = length_histograms(rows)
    fields.update(kind.summary_fields(key, every))
    extra = _observed_fields(observed)
    power = extra.pop(POWER_WINDOW, None)  # raw readings: the level's energy from them
    if isinstance(power, dict):
        # every token the level's requests received, a window's left-outs too: they drew power
        fields["energy"] = energy = level_energy(power, [r for r in every if not r.warmup])
        if "note" in energy:
            fields["warnings"] = [*fields["warnings"], f"energy not reported: {energy['note']}"]
    fields.update(extra)
    prefix = prefix_fields(rows, extra)
    fields["warnings"] = [*fields["warnings"], *prefix.pop("warnings")]
    fields.update(prefix)
    if windowed is not None:
        extra = _window_fields(kind, key, windowed, bool(extra.get("client_bound")))
        notes = extra.pop("warnings")
        fields.update(extra)
        fields["warnings"] = [*fields["warnings"], *notes]
    if extra.get("client_bound"):
        fields["warnings"] = [*fields["warnings"], "client-bound: the load generator lagged"]
    fields["warnings"] = [*fields["warnings"], *_worker_warnings(extra)]
    gap = send_gap_fields(rows)
    fields["warnings"] = [*fields["warnings"], *gap.pop("warnings", [])]
    if gap.pop("client_bound", False):
        fields["client_bound"] = True
    fields.update(gap)
    ttft = fields.get("ttft_mean_ms")
    warned = fields["warnings"]
    fields.update(_client_delay(
        rows, ttft if isinstance(ttft, float) else None, warned if isinstance(warned, list) else []
    ))
    return LevelSummary.for_key(key, **fields)


def _window_fields(
    kind: LoadKind, key: LevelKey, windowed: Windowed, monitor_bound: bool
) -> dict[str, Any]:
    """The schedule columns of a windowed level, and a warning for what it left out."""
    fields = schedule_fields(windowed, kind.offered_rate(key), monitor_bound)
    fields["warnings"] = []
    if windowed.left_out:
        note = f"{windowed.left_out} requests in the warm-up/cool-down window left out"
        if not windowed.kept:
            note += " (all of them: shorten --warmup-s/--cooldown-s or lengthen the level)"
        fields["warnings"] = [note]
    return fields


def _observed_fields(observed: Mapping[str, Any] | ClientHealth | None) -> dict[str, Any]:
    if observed is None:
        return {}
    if isinstance(observed, ClientHealth):
        return {
            "loop_lag_p99_ms": observed.loop_lag_p99_ms,
            "client_cpu_pct": observed.client_cpu_pct,
            "client_bound": observed.client_bound,
        }
    return dict(observed)


def _counts(rows: list[RequestRecord]) -> dict[str, int]:
    return {
        "reconnects": sum(r.reconnects for r in rows),
        "missing_done": sum(1 for r in rows if r.missing_done),
        "utf8_replaced": sum(r.utf8_replaced for r in rows),
    }


def _token_warnings(rows: list[RequestRecord]) -> list[str]:
    """Say when output tokens were counted from chunks, not taken from the server's usage."""
    estimated = sum(1 for r in rows if r.ok and r.token_source == "estimated")
    if not estimated:
        return []
    return [
        f"tokens estimated for {estimated} request(s): the server sent no usage, so each "
        "token-bearing chunk counted as one token"
    ]


def _client_delay(
    rows: list[RequestRecord], ttft_mean_ms: float | None, warnings: list[str]
) -> dict[str, object]:
    """The client's own mean delay inside TTFT; over the bound, the level is client-bound
    (its TTFT holds that much of the client's time), whatever the lag probe saw."""
    delays = [r.client_delay_ms for r in rows if r.ok and r.client_delay_ms is not None]
    if not delays:
        return {}
    mean = float(np.mean(delays))
    bound = max(CLIENT_DELAY_BOUND_MS, CLIENT_DELAY_BOUND_SHARE * (ttft_mean_ms or 0.0))
    if mean <= bound:
        return {"client_delay_mean_ms": mean}
    warning = f"client-bound: the client's own delay averaged {mean:.1f} ms of each TTFT"
    return {"client_delay_mean_ms": mean, "client_bound": True, "warnings": [*warnings, warning]}


def _throughput(rows: list[RequestRecord], metrics: list[RequestMetrics]) -> dict[str, object]:
    """Throughput over the level's wall time (first send to last completion), never 1/latency."""
    wall_ns = _wall_ns(rows)
    ok = [r for r in rows if r.ok]
    out: dict[str, object] = {
        "prompt_tokens_mean": _mean([r.prompt_tokens for r in ok if r.prompt_tokens is not None]),
        "completion_tokens_mean": _mean([m.output_tokens for m in metrics]),
        "tokens_from_usage": bool(ok) and all(r.token_source == "usage" for r in ok),
    }
    if not wall_ns or wall_ns <= 0:
        return out
    busy_ns = sum(r.ended_at - r.sent_at for r in rows if r.ended_at and r.sent_at is not None)
    out.update(
        wall_s=wall_ns / NS_PER_S,
        rps=len(metrics) * NS_PER_S / wall_ns,
        output_tok_s=sum(m.output_tokens for m in metrics) * NS_PER_S / wall_ns,
        served_concurrency=busy_ns / wall_ns,
    )
    return out


def _mean(values: list[int] | list[float]) -> float | None:
    return float(np.mean(values)) if values else None


def summarise_records(
    records: Iterable[RequestRecord],
    observed: Mapping[LevelKey, Mapping[str, Any] | ClientHealth] | None = None,
    planned: Mapping[LevelKey, int] | None = None,
    windows: Mapping[str, Window] | None = None,
) -> list[LevelSummary]:
    """Level summaries for a whole run's records, grouped by level key; with `planned`
    (the requests each level was to send) a level that stopped short is marked partial.

    Warm-up rows never form a level: they are sent before the sweep and belong to none
    (a killed run recomputed from its rows plans like the same run with its summary).
    """
    by_level: dict[LevelKey, list[RequestRecord]] = {}
    for record in records:
        if not record.warmup:
            by_level.setdefault(record.key, []).append(record)
    observed = observed or {}
    windows = windows or {}  # by kind name: every level of a kind shares the run's window
    return [
        summarise_level(
            key, by_level[key], observed.get(key),
            None if planned is None else planned.get(key), windows.get(kind_of(key).name),
        )
        for key in sorted(by_level)
    ]


__all__ = ["DISTRIBUTION_METRICS", "ClientHealth", "summarise_level", "summarise_records"]


def _worker_warnings(extra: Mapping[str, Any]) -> list[str]:
    """A level run by workers names each worker that died or was client-bound."""
    notes = []
    for row in extra.get("worker_health") or []:
        if row.get("died"):
            notes.append(f"worker {row['worker']} {row['died']}: its requests in flight are "
                         "marked worker_died and its unsent share was not sent")
        elif row.get("client_bound"):
            notes.append(f"worker {row['worker']} was client-bound (loop lag p99 "
                         f"{row.get('loop_lag_p99_ms', 0):.1f} ms, CPU "
                         f"{row.get('client_cpu_pct', 0):.0f}%)")
    return notes
