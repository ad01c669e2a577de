"""The canonical server series, and the one table that maps each engine's metric names onto them.

A scrape yields samples by their exposition names (`vllm:num_requests_waiting`,
`sglang:num_queue_reqs`, `llamacpp:requests_deferred`, ...). Everything after the scrape
(per-level fields, findings, the timeline) reads only the canonical names below, so a new
engine is new rows in `SERIES_TABLE`, nothing else. Names come from each engine's documented
`/metrics` (vLLM's production metrics page, SGLang's production metrics, TGI's metrics
reference, llama.cpp's server README); a name an engine does not list simply never matches,
and an unknown engine keeps only its raw samples.

Counters are cumulative: rates and ratios come from differences between two scrapes. Several
samples of one name (labels per model, TP rank, method) are added up, except for ratios,
which are averaged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

Kind = Literal["gauge", "counter"]


@dataclass(frozen=True, slots=True)
class Canonical:
    name: str
    kind: Kind
    ratio: bool  # 0..1 or a mean: several samples are averaged, not added
    doc: str


CANONICAL: dict[str, Canonical] = {
    c.name: c
    for c in (
        Canonical("running", "gauge", False, "requests in the running batch"),
        Canonical("waiting", "gauge", False, "requests queued, not yet scheduled"),
        Canonical("kv_usage", "gauge", True, "KV-cache usage, 0..1"),
        Canonical("preemptions", "counter", False, "requests preempted (cumulative)"),
        Canonical("prefix_queries", "counter", False, "prompt tokens looked up in the cache"),
        Canonical("prefix_hits", "counter", False, "of which the prefix cache held"),
        Canonical("prefix_hit_rate", "gauge", True, "prefix-cache hit rate the engine reports"),
        Canonical("prompt_tokens", "counter", False, "prompt tokens processed"),
        Canonical("generation_tokens", "counter", False, "tokens generated"),
        Canonical("spec_drafts", "counter", False, "speculative draft proposals"),
        Canonical("spec_draft_tokens", "counter", False, "draft tokens proposed"),
        Canonical("spec_accepted_tokens", "counter", False, "draft tokens accepted"),
        Canonical("spec_acceptance", "gauge", True, "draft acceptance rate the engine reports"),
        Canonical("spec_accept_length", "gauge", True, "mean accepted length per step"),
        Canonical("ttft_sum_s", "counter", False, "server TTFT histogram: sum, s"),
        Canonical("ttft_count", "counter", False, "server TTFT histogram: count"),
        Canonical("itl_sum_s", "counter", False, "server ITL histogram: sum, s"),
        Canonical("itl_count", "counter", False, "server ITL histogram: count"),
    )
}

# exposition sample name -> canonical series. Histograms map their _sum and _count samples.
SERIES_TABLE: dict[str, str] = {
    # vLLM (v0 and v1; `gpu_cache_usage_perc` before the rename to `kv_cache_usage_perc`,
    # `gpu_prefix_cache_*` before `prefix_cache_*`, `time_per_output_token` before
    # `inter_token_latency`). The simulator speaks these names too.
    "vllm:num_requests_running": "running",
    "vllm:num_requests_waiting": "waiting",
    "vllm:gpu_cache_usage_perc": "kv_usage",
    "vllm:kv_cache_usage_perc": "kv_usage",
    "vllm:num_preemptions_total": "preemptions",
    "vllm:prefix_cache_queries_total": "prefix_queries",
    "vllm:prefix_cache_hits_total": "prefix_hits",
    "vllm:gpu_prefix_cache_queries_total": "prefix_queries",
    "vllm:gpu_prefix_cache_hits_total": "prefix_hits",
    "vllm:gpu_prefix_cache_hit_rate": "prefix_hit_rate",
    "vllm:prompt_tokens_total": "prompt_tokens",
    "vllm:generation_tokens_total": "generation_tokens",
    "vllm:spec_decode_num_drafts_total": "spec_drafts",
    "vllm:spec_decode_num_draft_tokens_total": "spec_draft_tokens",
    "vllm:spec_decode_num_accepted_tokens_total": "spec_accepted_tokens",
    "vllm:spec_decode_draft_acceptance_rate": "spec_acceptance",
    "vllm:time_to_first_token_seconds_sum": "ttft_sum_s",
    "vllm:time_to_first_token_seconds_count": "ttft_count",
    "vllm:time_per_output_token_seconds_sum": "itl_sum_s",
    "vllm:time_per_output_token_seconds_count": "itl_count",
    "vllm:inter_token_latency_seconds_sum": "itl_sum_s",
    "vllm:inter_token_latency_seconds_count": "itl_count",
    # SGLang (`--enable-metrics`): token_usage is the KV pool's use, 0..1.
    "sglang:num_running_reqs": "running",
    "sglang:num_queue_reqs": "waiting",
    "sglang:token_usage": "kv_usage",
    "sglang:cache_hit_rate": "prefix_hit_rate",
    "sglang:spec_accept_length": "spec_accept_length",
    "sglang:prompt_tokens_total": "prompt_tokens",
    "sglang:generation_tokens_total": "generation_tokens",
    "sglang:time_to_first_token_seconds_sum": "ttft_sum_s",
    "sglang:time_to_first_token_seconds_count": "ttft_count",
    "sglang:inter_token_latency_seconds_sum": "itl_sum_s",
    "sglang:inter_token_latency_seconds_count": "itl_count",
    # TGI: no KV gauge; token counts are per-request histograms, counted as requests end.
    "tgi_batch_current_size": "running",
    "tgi_queue_size": "waiting",
    "tgi_request_input_length_sum": "prompt_tokens",
    "tgi_request_generated_tokens_sum": "generation_tokens",
    "tgi_request_mean_time_per_token_duration_sum": "itl_sum_s",
    "tgi_request_mean_time_per_token_duration_count": "itl_count",
    # llama.cpp's llama-server --metrics (`kv_cache_usage_ratio` only in older builds).
    "llamacpp:requests_processing": "running",
    "llamacpp:requests_deferred": "waiting",
    "llamacpp:kv_cache_usage_ratio": "kv_usage",
    "llamacpp:prompt_tokens_total": "prompt_tokens",
    "llamacpp:tokens_predicted_total": "generation_tokens",
    # Newer builds count speculative drafts. Their `prompt_tokens_total` leaves out the
    # `prompt_tokens_cached_total` reused from the cache, and no single name counts the
    # lookups, so llama.cpp gets no prefix hit rate here rather than a wrong one.
    "llamacpp:spec_decode_num_drafts_total": "spec_drafts",
    "llamacpp:spec_decode_num_draft_tokens_total": "spec_draft_tokens",
    "llamacpp:spec_decode_num_accepted_tokens_total": "spec_accepted_tokens",
}

# name prefix -> engine, most specific first (the simulator also exports vLLM's names)
ENGINE_PREFIXES: tuple[tuple[str, str], ...] = (
    ("sim:", "servecap-sim"),
    ("vllm:", "vllm"),
    ("sglang:", "sglang"),
    ("tgi_", "tgi"),
    ("llamacpp:", "llama.cpp"),
)


def detect_engine(names: Iterable[str]) -> str | None:
    """The engine whose prefix the sample names carry (None: unknown, raw samples only)."""
    seen = set(names)
    for prefix, engine in ENGINE_PREFIXES:
        if any(name.startswith(prefix) for name in seen):
            return engine
    return None


def canonical_values(samples: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Canonical series from (sample name, value) pairs of one scrape.

    NaN and infinite values (an engine's gauge before its first step) are skipped."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for name, value in samples:
        series = SERIES_TABLE.get(name)
        if series is None or value != value or value in (float("inf"), float("-inf")):
            continue
        sums[series] = sums.get(series, 0.0) + value
        counts[series] = counts.get(series, 0) + 1
    return {
        s: (total / counts[s] if CANONICAL[s].ratio else total) for s, total in sums.items()
    }


def mapped_names(engine_names: Mapping[str, str] = SERIES_TABLE) -> dict[str, list[str]]:
    """Canonical series -> the exposition names mapped onto it (for the README and tests)."""
    out: dict[str, list[str]] = {name: [] for name in CANONICAL}
    for exposed, series in engine_names.items():
        out[series].append(exposed)
    return out
