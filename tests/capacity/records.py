"""Synthetic closed-loop records for the capacity rules: c streams, each sending its next
request when its last ends, with TTFTs drawn by the test."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord

MS = 1_000_000
DECODE_MS = 1000.0  # 100 tokens at 10 ms: TPS 100 whatever the TTFT


def closed_records(
    c: int, ttft_ms: Callable[[int], float], n: int, failed_at: int | None = None
) -> Iterator[RequestRecord]:
    """`n` records of a closed level of `c` streams, in the order they END; request i's
    TTFT is `ttft_ms(i)` (i in send order)."""
    free_at = [0] * c
    pending: list[RequestRecord] = []
    for i in range(n):
        stream = min(range(c), key=lambda s: free_at[s])
        start = free_at[stream]
        record = RequestRecord.for_level(LevelKey.closed(c), i, stream, start)
        record.sent_at = start
        record.first_token_at = start + int(ttft_ms(i) * MS)
        record.last_token_at = record.ended_at = record.first_token_at + int(DECODE_MS * MS)
        record.completion_tokens = 100
        if i == failed_at:
            record.status, record.reason = "failed", "http_error"
        free_at[stream] = record.ended_at
        pending.append(record)
    yield from sorted(pending, key=lambda r: r.ended_at or 0)
