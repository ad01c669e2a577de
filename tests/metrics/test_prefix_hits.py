"""A level's usage hit rate and its prefix-cache warnings (pure)."""

from __future__ import annotations

from servecap.core.records import RequestRecord
from servecap.metrics.prefix_hits import prefix_fields


def _row(prompt: int, cached: int | None, ok: bool = True) -> RequestRecord:
    row = RequestRecord(request_id=0, concurrency=1, stream_index=0, scheduled_at=0,
                        prompt_tokens=prompt, cached_tokens=cached)
    if not ok:
        row.status = "failed"
    return row


def test_usage_rate_over_the_successful_requests_that_reported() -> None:
    rows = [_row(100, 60), _row(100, 40), _row(100, None), _row(100, 100, ok=False)]
    fields = prefix_fields(rows, {})
    assert fields == {"prefix_hit_rate_usage": 0.5, "prefix_cached_requests": 2,
                      "warnings": []}


def test_no_reports_no_fields() -> None:
    assert prefix_fields([_row(100, None)], {}) == {"warnings": []}


def test_disagreement_target_miss_and_reset_failure_are_warnings() -> None:
    rows = [_row(100, 60)]
    agree = prefix_fields(rows, {"server_prefix_hit_rate": 0.62, "prefix_hit_ideal": 0.6,
                                 "prefix_cache_reset": "done"})
    assert agree["warnings"] == []
    apart = prefix_fields(rows, {"server_prefix_hit_rate": 0.5, "prefix_hit_ideal": 0.6,
                                 "prefix_cache_reset": "failed: HTTP 404 from http://x/r"})
    assert apart["warnings"] == [
        "prefix cache reset before the level failed: HTTP 404 from http://x/r",
        "prefix hit rate: usage says 0.600, /metrics 0.500 (apart by more than 0.05)",
        "prefix hit rate served 0.500, prompts built for 0.600 (apart by more than 0.03)",
    ]
