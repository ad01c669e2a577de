"""Per-level summary rows: the columns of `summary.csv` / `summary.json`.

Column names carry their unit (`_ms`, `_s`, `tok_s`). For TPS and decode TPS the `p90`/`p99`
columns are the *tail*: the 10th and 1st percentile, because lower is worse.
Every metric column is optional so that summary-only runs imported from published tables
(which lack most columns) use the same model.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from servecap.core.level_key import LevelKey, key_fields, key_from_fields

STATS: tuple[str, ...] = ("mean", "p50", "p90", "p99")

# metric key -> unit suffix of its columns ("" for tok/s metrics).
DISTRIBUTION_METRICS: dict[str, str] = {
    "ttft": "_ms",
    "ttfa": "_ms",
    "itl": "_ms",
    "chunk_gap": "_ms",
    "tps": "",
    "decode_tps": "",
    "latency": "_s",
    # open loop: measured from each request's target time (`scheduled_at`)
    "ttft_sched": "_ms",
    "latency_sched": "_s",
}

# Columns only levels with target times and a window fill (open loop); a closed loop's
# stored rows leave them out, so its files keep the format they always had.
SCHEDULE_COLUMNS: tuple[str, ...] = (
    "n_left_out", "window_s", "offered_rps", "sent_rps", "achieved_rps",
    "n_cap_waited", "cap_wait_mean_ms", "cap_wait_p99_ms", "cap_wait_max_ms",
    *(f"ttft_sched_{stat}_ms" for stat in STATS),
    *(f"latency_sched_{stat}_s" for stat in STATS),
)

# Columns a level run by worker processes fills (`--workers`, `--ray`): summary.json only,
# left out of a one-process level's row, so the files of such runs keep their format.
WORKER_COLUMNS: tuple[str, ...] = (
    "workers", "worker_health", "workers_client_bound", "workers_died",
)

HIGHER_IS_BETTER: frozenset[str] = frozenset({"tps", "decode_tps"})

# The metrics and statistics a level carries bootstrap intervals for (`LevelSummary.intervals`).
INTERVAL_METRICS: tuple[str, ...] = ("ttft", "tps", "latency")
INTERVAL_STATS: tuple[str, ...] = ("mean", "p90")


class IntervalSummary(BaseModel):
    """A statistic's estimate and its bootstrap confidence interval, as stored.

    Same units and tail convention as the level's columns (TTFT ms, latency s, TPS "p90" the
    10th percentile). `method` names how it was computed (see `stats.bootstrap`).
    """

    model_config = ConfigDict(extra="forbid")

    estimate: float
    low: float
    high: float
    confidence: float
    n: int
    resamples: int
    method: str


def column(metric: str, stat: str) -> str:
    """The summary column for one statistic of one metric, e.g. `ttft_p90_ms`."""
    return f"{metric}_{stat}{DISTRIBUTION_METRICS[metric]}"


class LevelSummary(BaseModel):
    """One level of one run, keyed by `key` (stored as `concurrency` for the closed kind,
    as `level`, the key's text, for any other)."""

    model_config = ConfigDict(extra="forbid")

    concurrency: int | None = Field(default=None, ge=1)
    level: str | None = None
    n_requests: int | None = None
    n_ok: int | None = None
    n_failed: int | None = None
    failures: dict[str, int] = Field(default_factory=dict)
    error_rate: float | None = None

    ttft_mean_ms: float | None = None
    ttft_p50_ms: float | None = None
    ttft_p90_ms: float | None = None
    ttft_p99_ms: float | None = None
    ttfa_mean_ms: float | None = None
    ttfa_p50_ms: float | None = None
    ttfa_p90_ms: float | None = None
    ttfa_p99_ms: float | None = None
    itl_mean_ms: float | None = None
    itl_p50_ms: float | None = None
    itl_p90_ms: float | None = None
    itl_p99_ms: float | None = None
    chunk_gap_mean_ms: float | None = None
    chunk_gap_p50_ms: float | None = None
    chunk_gap_p90_ms: float | None = None
    chunk_gap_p99_ms: float | None = None
    tps_mean: float | None = None
    tps_p50: float | None = None
    tps_p90: float | None = None
    tps_p99: float | None = None
    decode_tps_mean: float | None = None
    decode_tps_p50: float | None = None
    decode_tps_p90: float | None = None
    decode_tps_p99: float | None = None
    latency_mean_s: float | None = None
    latency_p50_s: float | None = None
    latency_p90_s: float | None = None
    latency_p99_s: float | None = None

    rps: float | None = None
    output_tok_s: float | None = None
    wall_s: float | None = None
    served_concurrency: float | None = None
    prompt_tokens_mean: float | None = None
    completion_tokens_mean: float | None = None
    tokens_from_usage: bool | None = None
    # lengths sent (asked for) and served (usage), per level: metrics/lengths.py
    input_tokens_sent_mean: float | None = None
    input_tokens_sent_p50: float | None = None
    input_tokens_sent_p90: float | None = None
    output_tokens_sent_mean: float | None = None
    output_tokens_sent_p50: float | None = None
    output_tokens_sent_p90: float | None = None
    prompt_tokens_p50: float | None = None
    prompt_tokens_p90: float | None = None
    completion_tokens_p50: float | None = None
    completion_tokens_p90: float | None = None
    # how late a scheduled level's requests went out (sent_at - scheduled_at)
    send_lateness_mean_ms: float | None = None
    send_lateness_p99_ms: float | None = None
    send_lateness_max_ms: float | None = None
    # the client's own part of it, every kind (closed loop: from the stream coming free to
    # the last byte at the kernel; a p99 over 10 ms flags the level client-bound)
    send_gap_mean_ms: float | None = None
    send_gap_p99_ms: float | None = None
    send_gap_max_ms: float | None = None
    # `input`/`output` -> {"edges", "sent", "served"}: the lengths' histograms (report chart)
    length_histograms: dict[str, dict[str, list[float]]] = Field(default_factory=dict)
    loop_lag_p99_ms: float | None = None
    client_cpu_pct: float | None = None
    client_bound: bool | None = None
    # Worker processes: how many ran the level, each one's own health ({worker, requests,
    # loop_lag_p99_ms, client_cpu_pct, client_bound, died?}; the level's lag and CPU above
    # are the workers' worst and any client-bound worker flags it), which were
    # client-bound and which died; None for a level run in one process.
    workers: int | None = None
    worker_health: list[dict[str, Any]] | None = None
    workers_client_bound: list[int] | None = None
    workers_died: list[int] | None = None
    # the client's own delay inside TTFT (RequestRecord.client_delay_ms), mean over the level
    client_delay_mean_ms: float | None = None
    # the server's own view of the level, from its /metrics (metrics/server_view.py)
    server_scrapes: int | None = None
    server_scrape_errors: int | None = None
    server_running_mean: float | None = None
    server_running_max: float | None = None
    server_waiting_mean: float | None = None
    server_waiting_max: float | None = None
    server_waiting_share: float | None = None
    server_kv_usage_mean: float | None = None
    server_kv_usage_max: float | None = None
    server_preemptions: float | None = None
    server_prefix_hit_rate: float | None = None
    server_spec_acceptance: float | None = None
    server_spec_accept_length: float | None = None
    server_prompt_tok_s: float | None = None
    server_generation_tok_s: float | None = None
    server_ttft_mean_ms: float | None = None
    server_itl_mean_ms: float | None = None
    # the prefix cache (metrics/prefix_hits.py): the hit rate by the server's usage and how
    # many requests reported one, the rate the prompts were built for (`--prefix-hit-rate`:
    # target and what whole tokens allow) and the reset before the level (done, failed: why)
    prefix_hit_rate_usage: float | None = None
    prefix_cached_requests: int | None = None
    prefix_hit_target: float | None = None
    prefix_hit_ideal: float | None = None
    prefix_cache_reset: str | None = None
    warnings: list[str] = Field(default_factory=list)
    # Counting what went right only just: stale pooled connections skipped before a request
    # was written, streams that ended without `[DONE]`, invalid UTF-8 bytes replaced.
    reconnects: int | None = None
    missing_done: int | None = None
    utf8_replaced: int | None = None
    # The level stopped before all its requests were sent (a signal, a kill): it is kept
    # out of C_max unless asked for, and shown as partial.
    partial: bool | None = None
    # {metric: {stat: interval}} for INTERVAL_METRICS x INTERVAL_STATS; None in runs recorded
    # before intervals existed and in imported summaries (summary.json only, not the CSV).
    intervals: dict[str, dict[str, IntervalSummary | None]] | None = None
    # The level's kind's own block (`LoadKind.summary_fields`), e.g. a rate shape's time
    # windows: summary.json only, and absent for kinds that keep none.
    kind_block: dict[str, Any] | None = None
    # `--power-metrics`: the level's energy over its token window (`metrics.energy`: W, J,
    # J per output token, or a `note` saying why not); summary.json only, absent without it
    energy: dict[str, Any] | None = None
    # Sessions levels only (`metrics.sessions_level`): users N, mean drawn think time Z,
    # mean latency R of the turns, measured mean concurrency over the window, the law's
    # N * R / (R + Z) and (measured - law) / law, and mean TTFT (ms) by turn index. The law's
    # Z is the drawn think plus `think_lag_mean_s`, the client's own delay before a next turn.
    users: int | None = None
    think_time_mean_s: float | None = None
    think_lag_mean_s: float | None = None
    response_mean_s: float | None = None
    mean_concurrency: float | None = None
    law_concurrency: float | None = None
    law_error: float | None = None
    ttft_by_turn_ms: dict[str, float] | None = None

    # Open loop (and any kind with target times and a steady-state window); None elsewhere.
    n_left_out: int | None = None  # records the window left out (kept in requests.jsonl)
    window_s: float | None = None
    offered_rps: float | None = None  # the rate asked for
    sent_rps: float | None = None  # sends per second inside the window
    achieved_rps: float | None = None  # successful completions per second inside the window
    n_cap_waited: int | None = None  # requests that found the max-concurrency cap full
    cap_wait_mean_ms: float | None = None
    cap_wait_p99_ms: float | None = None
    cap_wait_max_ms: float | None = None
    ttft_sched_mean_ms: float | None = None
    ttft_sched_p50_ms: float | None = None
    ttft_sched_p90_ms: float | None = None
    ttft_sched_p99_ms: float | None = None
    latency_sched_mean_s: float | None = None
    latency_sched_p50_s: float | None = None
    latency_sched_p90_s: float | None = None
    latency_sched_p99_s: float | None = None

    @model_validator(mode="after")
    def _has_key(self) -> LevelSummary:
        if self.concurrency is None and self.level is None:
            raise ValueError("a level needs `concurrency` (or the `level` key of another kind)")
        if self.level is not None:
            LevelKey.parse(self.level)  # a ValueError names the bad key
        return self

    @classmethod
    def for_key(cls, key: LevelKey, **fields: Any) -> LevelSummary:
        return cls.model_validate({**key_fields(key), **fields})

    @property
    def key(self) -> LevelKey:
        return key_from_fields(self.concurrency, self.level)

    def stored(self) -> dict[str, Any]:
        """The row as written to summary.json/csv: only the key fields its kind uses."""
        data = self.model_dump(mode="json")
        for name in ("concurrency", "level", "kind_block", "energy", *SCHEDULE_COLUMNS,
                     *WORKER_COLUMNS):
            if data[name] is None:
                del data[name]
        return data

    def value(self, metric: str, stat: str) -> float | None:
        """A statistic of a distribution metric, e.g. `value("ttft", "p90")`."""
        result: float | None = getattr(self, column(metric, stat))
        return result

    def interval(self, metric: str, stat: str) -> IntervalSummary | None:
        """The stored bootstrap interval of one statistic, if this level has one."""
        return (self.intervals or {}).get(metric, {}).get(stat)


# The columns of a closed-loop summary (the format of every run before keys existed);
# a summary holding other kinds' levels adds `level` and the schedule columns
# (`summary_columns`).
# `intervals` is nested and lives in summary.json only, so the CSV keeps its columns.
_JSON_ONLY: frozenset[str] = frozenset({"intervals", "kind_block", "energy", *WORKER_COLUMNS})
# Columns only a sessions level fills: in the CSV of runs that have such levels.
SESSION_COLUMNS: tuple[str, ...] = (
    "users", "think_time_mean_s", "think_lag_mean_s", "response_mean_s", "mean_concurrency",
    "law_concurrency", "law_error", "ttft_by_turn_ms",
)
SUMMARY_COLUMNS: tuple[str, ...] = tuple(
    f for f in LevelSummary.model_fields
    if f != "level" and f not in _JSON_ONLY and f not in SESSION_COLUMNS
    and f not in SCHEDULE_COLUMNS
)


def summary_columns(levels: list[LevelSummary]) -> list[str]:
    """The CSV header for these levels: today's columns, plus `level` if a kind needs it."""
    if all(level.level is None for level in levels):
        return list(SUMMARY_COLUMNS)
    return [f for f in LevelSummary.model_fields if f not in _JSON_ONLY]
