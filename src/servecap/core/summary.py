"""Per-level summary rows: the columns of `summary.csv` / `summary.json`.

Column names carry their unit (`_ms`, `_s`, `tok_s`). For TPS and decode TPS the `p90`/`p99`
columns are the *tail*: the 10th and 1st percentile, because lower is worse.
Every metric column is optional so that summary-only runs imported from published tables
(which lack most columns) use the same model.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

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
}

HIGHER_IS_BETTER: frozenset[str] = frozenset({"tps", "decode_tps"})


def column(metric: str, stat: str) -> str:
    """The summary column for one statistic of one metric, e.g. `ttft_p90_ms`."""
    return f"{metric}_{stat}{DISTRIBUTION_METRICS[metric]}"


class LevelSummary(BaseModel):
    """One concurrency level of one run."""

    model_config = ConfigDict(extra="forbid")

    concurrency: int = Field(ge=1)
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
    loop_lag_p99_ms: float | None = None
    client_cpu_pct: float | None = None
    client_bound: bool | None = None
    warnings: list[str] = Field(default_factory=list)

    def value(self, metric: str, stat: str) -> float | None:
        """A statistic of a distribution metric, e.g. `value("ttft", "p90")`."""
        result: float | None = getattr(self, column(metric, stat))
        return result


SUMMARY_COLUMNS: tuple[str, ...] = tuple(LevelSummary.model_fields)
