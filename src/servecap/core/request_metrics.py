"""Metrics of one successful request, from its raw timestamps.

ITL is per token even when a chunk carries several tokens (speculative decoding):
`(last_token_at - first_token_at) / (N - n_first)`, n_first the tokens of the first
token-bearing chunk (per-chunk usage if the server sent it, else N / chunks).
Decode TPS is its reciprocal, `(N - n_first) / (last - first)`, which equals DESIGN's
`(N - 1) / (last - first)` when each chunk carries one token.
"""

from __future__ import annotations

from dataclasses import dataclass

from servecap.core.records import RequestRecord

NS_PER_S = 1e9


@dataclass(frozen=True, slots=True)
class RequestMetrics:
    ttft_ns: int
    ttfa_ns: int | None
    itl_ns: float | None
    tps: float | None
    decode_tps: float | None
    latency_ns: int
    output_tokens: int


def first_chunk_tokens(record: RequestRecord) -> float:
    """Tokens carried by the first token-bearing chunk (exact or evenly spread)."""
    if record.chunk_tokens:
        return float(record.chunk_tokens[0])
    chunks = len(record.chunk_at)
    return record.output_tokens / chunks if chunks else 0.0


def request_metrics(record: RequestRecord) -> RequestMetrics | None:
    """The metrics of a successful request; None for failures or incomplete timestamps."""
    if not record.ok or None in (record.sent_at, record.first_token_at, record.ended_at):
        return None
    assert record.sent_at is not None and record.first_token_at is not None
    assert record.ended_at is not None
    n_tokens = record.output_tokens
    latency_ns = record.ended_at - record.sent_at
    last = record.last_token_at if record.last_token_at is not None else record.first_token_at
    decode_ns = last - record.first_token_at
    decode_tokens = n_tokens - first_chunk_tokens(record)
    itl_ns = decode_ns / decode_tokens if decode_tokens > 0 and decode_ns > 0 else None
    ttfa_ns = None if record.first_answer_at is None else record.first_answer_at - record.sent_at
    return RequestMetrics(
        ttft_ns=record.first_token_at - record.sent_at,
        ttfa_ns=ttfa_ns,
        itl_ns=itl_ns,
        tps=n_tokens * NS_PER_S / latency_ns if latency_ns > 0 else None,
        decode_tps=NS_PER_S / itl_ns if itl_ns else None,
        latency_ns=latency_ns,
        output_tokens=n_tokens,
    )


def chunk_gaps_ns(record: RequestRecord) -> list[int]:
    """Gaps between consecutive token-bearing chunks (the pooled distribution beside ITL)."""
    times = record.chunk_at
    return [b - a for a, b in zip(times, times[1:], strict=False)]
