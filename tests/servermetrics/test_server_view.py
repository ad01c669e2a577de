"""The per-level server view (pure): gauges over the level, counters as differences."""

from __future__ import annotations

import pytest

from servecap.metrics.server_view import server_fields

S = 1_000_000_000


def test_gauges_come_from_inside_counters_span_the_edges() -> None:
    before = (0, {"waiting": 0.0, "generation_tokens": 100.0, "prompt_tokens": 10.0})
    inside = [
        (1 * S, {"waiting": 4.0, "kv_usage": 0.5, "running": 8.0, "generation_tokens": 300.0}),
        (2 * S, {"waiting": 0.0, "kv_usage": 0.9, "running": 8.0, "generation_tokens": 500.0}),
    ]
    after = (4 * S, {"waiting": 0.0, "generation_tokens": 900.0, "prompt_tokens": 50.0})
    f = server_fields([before, *inside, after], errors=1, inside=inside)
    assert f["server_scrapes"] == 2 and f["server_scrape_errors"] == 1
    assert (f["server_waiting_mean"], f["server_waiting_max"]) == (2.0, 4.0)
    assert f["server_waiting_share"] == 0.5
    assert f["server_kv_usage_mean"] == pytest.approx(0.7) and f["server_kv_usage_max"] == 0.9
    assert f["server_generation_tok_s"] == pytest.approx(200.0)  # 800 tokens over 4 s
    assert f["server_prompt_tok_s"] == pytest.approx(10.0)


def test_ratios_prefer_counters_and_fall_back_on_gauges() -> None:
    a = {"spec_drafts": 10.0, "spec_draft_tokens": 30.0, "spec_accepted_tokens": 15.0,
         "prefix_queries": 100.0, "prefix_hits": 20.0, "spec_acceptance": 0.99}
    b = {"spec_drafts": 20.0, "spec_draft_tokens": 60.0, "spec_accepted_tokens": 30.0,
         "prefix_queries": 200.0, "prefix_hits": 70.0, "spec_acceptance": 0.99}
    f = server_fields([(0, a), (S, b)])
    assert f["server_spec_acceptance"] == pytest.approx(0.5)
    assert f["server_spec_accept_length"] == pytest.approx(2.5)  # 1 + 15 accepted / 10 drafts
    assert f["server_prefix_hit_rate"] == pytest.approx(0.5)
    gauges = server_fields([(0, {"spec_accept_length": 3.0, "prefix_hit_rate": 0.2})])
    assert gauges["server_spec_accept_length"] == 3.0 and gauges["server_prefix_hit_rate"] == 0.2


def test_histogram_means_and_preemptions() -> None:
    a = {"ttft_sum_s": 1.0, "ttft_count": 10.0, "itl_sum_s": 1.0, "itl_count": 100.0,
         "preemptions": 3.0}
    b = {"ttft_sum_s": 3.0, "ttft_count": 20.0, "itl_sum_s": 3.0, "itl_count": 200.0,
         "preemptions": 5.0}
    f = server_fields([(0, a), (S, b)])
    assert f["server_ttft_mean_ms"] == pytest.approx(200.0)
    assert f["server_itl_mean_ms"] == pytest.approx(20.0)
    assert f["server_preemptions"] == 2.0


def test_a_counter_reset_gives_no_value_not_a_negative_one() -> None:
    f = server_fields([(0, {"generation_tokens": 500.0}), (S, {"generation_tokens": 10.0})])
    assert "server_generation_tok_s" not in f


def test_no_scrapes_only_counts() -> None:
    assert server_fields([], errors=3) == {"server_scrapes": 0, "server_scrape_errors": 3}
