"""Each diagnosis rule with a case that fires and one that does not."""

from __future__ import annotations

from typing import Any

from servecap.analysis.series import ConfigSeries
from servecap.analysis.server_findings import (
    acceptance_findings,
    queue_findings,
    rate_findings,
    server_findings,
)
from servecap.core.summary import LevelSummary


def lv(c: int, **kw: Any) -> LevelSummary:
    return LevelSummary(concurrency=c, **kw)


def test_queue_building_names_the_level_where_ttft_jumps() -> None:
    series = ConfigSeries("sglang-spec", [
        lv(16, ttft_p90_ms=120.0, server_waiting_share=0.1, server_waiting_mean=0.1),
        lv(64, ttft_p90_ms=4750.0, server_waiting_share=0.82, server_waiting_mean=23.0,
           server_waiting_max=40.0, server_kv_usage_mean=0.97),
    ])
    (f,) = queue_findings(series)
    assert f.kind == "server_queue" and str(f.level) == "c=64"
    assert "TTFT p90 4750 ms (39.6x c=16)" in f.text
    assert "82% of the level (mean 23.0 waiting, max 40)" in f.text
    assert "KV usage sat at 97%: memory-bound admission" in f.text


def test_queue_rule_is_quiet_without_a_standing_queue() -> None:
    series = ConfigSeries("x", [
        lv(1, ttft_p90_ms=50.0, server_waiting_share=0.0, server_waiting_mean=0.0),
        lv(8, ttft_p90_ms=60.0, server_waiting_share=0.3, server_waiting_mean=2.0),
        lv(16, ttft_p90_ms=70.0),  # no server fields at all
    ])
    assert queue_findings(series) == []


def test_queue_with_room_in_kv_says_how_many_ran() -> None:
    series = ConfigSeries("x", [lv(64, server_waiting_share=1.0, server_waiting_mean=5.0,
                                   server_kv_usage_mean=0.3, server_running_max=32.0)])
    (f,) = queue_findings(series)
    assert "while at most 32 ran at once" in f.text and "memory-bound" not in f.text


def test_acceptance_that_falls_says_where() -> None:
    series = ConfigSeries("vllm-spec", [
        lv(1, server_spec_acceptance=0.81), lv(16, server_spec_acceptance=0.55),
        lv(64, server_spec_acceptance=0.34),
    ])
    (f,) = acceptance_findings(series)
    assert f.kind == "spec_acceptance_falls" and str(f.level) == "c=16"
    assert "fell from 0.81 at c=1 to 0.34 at c=64" in f.text


def test_steady_acceptance_is_reported_per_level_not_as_a_fall() -> None:
    series = ConfigSeries("vllm-spec", [lv(1, server_spec_acceptance=0.30),
                                        lv(64, server_spec_acceptance=0.29)])
    (f,) = acceptance_findings(series)
    assert f.kind == "spec_acceptance" and "c=1 0.30, c=64 0.29" in f.text
    assert acceptance_findings(ConfigSeries("one", [lv(1, server_spec_acceptance=0.3)])) == []


def test_token_rates_that_disagree_are_a_finding() -> None:
    series = ConfigSeries("x", [lv(8, output_tok_s=1000.0, server_generation_tok_s=1200.0,
                                   wall_s=30.0)])
    (f,) = rate_findings(series)
    assert f.kind == "server_rate_mismatch" and "(+20%)" in f.text


def test_token_rates_that_agree_or_short_levels_are_not() -> None:
    series = ConfigSeries("x", [
        lv(8, output_tok_s=1000.0, server_generation_tok_s=1030.0, wall_s=30.0),
        lv(16, output_tok_s=1000.0, server_generation_tok_s=2000.0, wall_s=1.0),
    ])
    assert rate_findings(series) == []


def test_levels_without_server_fields_fire_nothing() -> None:
    assert server_findings(ConfigSeries("x", [lv(1, ttft_p90_ms=1.0), lv(2)])) == []


def test_of_several_queued_levels_the_one_where_ttft_jumps_is_named() -> None:
    series = ConfigSeries("sglang-spec", [
        lv(16, ttft_p90_ms=90.0),
        lv(32, ttft_p90_ms=110.0, server_waiting_share=0.67, server_waiting_mean=1.3),
        lv(64, ttft_p90_ms=550.0, server_waiting_share=1.0, server_waiting_mean=31.5),
    ])
    (f,) = queue_findings(series)
    assert str(f.level) == "c=64" and "(5.0x c=32)" in f.text


def test_speculation_stops_paying_where_its_itl_meets_the_baseline() -> None:
    from servecap.analysis.server_findings import spec_pays_findings

    spec = ConfigSeries("vllm-spec", [
        lv(1, itl_mean_ms=3.0, server_spec_acceptance=0.8),
        lv(16, itl_mean_ms=9.0, server_spec_acceptance=0.5),
        lv(64, itl_mean_ms=20.0, server_spec_acceptance=0.3),
    ])
    base = ConfigSeries("vllm-direct", [lv(1, itl_mean_ms=6.0), lv(16, itl_mean_ms=8.0),
                                        lv(64, itl_mean_ms=12.0)])
    (f,) = spec_pays_findings(spec, base)
    assert f.kind == "spec_stops_paying" and str(f.level) == "c=16"
    assert "ITL mean 9.00 ms against 8.00 ms for vllm-direct, with acceptance 0.50" in f.text


def test_speculation_that_always_pays_gives_no_such_finding() -> None:
    from servecap.analysis.server_findings import spec_pays_findings

    spec = ConfigSeries("s", [lv(1, itl_mean_ms=3.0, server_spec_acceptance=0.8)])
    base = ConfigSeries("b", [lv(1, itl_mean_ms=6.0)])
    assert spec_pays_findings(spec, base) == []
    assert spec_pays_findings(ConfigSeries("s", [lv(1, itl_mean_ms=9.0)]), base) == []
