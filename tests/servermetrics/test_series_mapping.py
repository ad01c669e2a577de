"""The canonical series table, engine by engine, on expositions written from documented names."""

from __future__ import annotations

from pathlib import Path

import pytest

from servecap.client.metrics_scrape import parse_exposition
from servecap.core.server_series import CANONICAL, SERIES_TABLE, detect_engine, mapped_names
from tests.servermetrics import expositions as ex


def series(text: str) -> dict[str, float]:
    return parse_exposition(text)[1]


def test_vllm_current_names() -> None:
    s = series(ex.VLLM_V1)
    assert s == {
        "running": 12.0, "waiting": 3.0, "kv_usage": 0.42, "preemptions": 7.0,
        "prefix_queries": 1000.0, "prefix_hits": 250.0, "prompt_tokens": 5000.0,
        "generation_tokens": 9000.0, "spec_drafts": 100.0, "spec_draft_tokens": 300.0,
        "spec_accepted_tokens": 150.0, "ttft_sum_s": 0.6, "ttft_count": 5.0,
        "itl_sum_s": 2.0, "itl_count": 100.0,
    }


def test_vllm_old_names() -> None:
    s = series(ex.VLLM_OLD)
    assert s["kv_usage"] == 0.9
    assert (s["prefix_queries"], s["prefix_hits"]) == (10.0, 5.0)
    assert s["spec_acceptance"] == 0.7
    assert (s["itl_sum_s"], s["itl_count"]) == (0.5, 10.0)


def test_sglang_adds_counts_and_averages_ratios() -> None:
    s = series(ex.SGLANG)
    assert s["running"] == 16.0  # two TP ranks' batches
    assert s["waiting"] == 5.0
    assert s["kv_usage"] == pytest.approx(0.7)
    assert s["prefix_hit_rate"] == 0.25
    assert s["spec_accept_length"] == 3.2
    assert (s["ttft_sum_s"], s["ttft_count"]) == (1.0, 2.0)


def test_tgi() -> None:
    s = series(ex.TGI)
    assert (s["running"], s["waiting"]) == (4.0, 9.0)
    assert (s["prompt_tokens"], s["generation_tokens"]) == (300.0, 450.0)
    assert "kv_usage" not in s  # TGI exports no KV gauge


def test_llamacpp() -> None:
    s = series(ex.LLAMACPP)
    assert s == {"running": 1.0, "waiting": 2.0, "kv_usage": 0.125,
                 "prompt_tokens": 33.0, "generation_tokens": 78.0}


def test_llamacpp_recorded_scrape() -> None:
    """A real llama-server scrape, recorded (tests/servermetrics/data): two 16-token requests."""
    text = (Path(__file__).parent / "data" / "llamacpp-0c1e570.prom").read_text()
    samples, s = parse_exposition(text)
    assert detect_engine(samples) == "llama.cpp"
    assert s == {"running": 0.0, "waiting": 0.0, "prompt_tokens": 22.0,
                 "generation_tokens": 32.0, "spec_drafts": 0.0, "spec_draft_tokens": 0.0,
                 "spec_accepted_tokens": 0.0}


def test_unknown_engine_keeps_raw_samples_only() -> None:
    samples, s = parse_exposition(ex.UNKNOWN)
    assert s == {}
    assert samples == {"myengine_queue": 3.0}
    assert detect_engine(samples) is None


@pytest.mark.parametrize(
    ("text", "engine"),
    [(ex.VLLM_V1, "vllm"), (ex.SGLANG, "sglang"), (ex.TGI, "tgi"), (ex.LLAMACPP, "llama.cpp"),
     ("sim:engine_steps_total 1\nvllm:num_requests_running 0\n", "servecap-sim")],
)
def test_detect_engine(text: str, engine: str) -> None:
    assert detect_engine(parse_exposition(text)[0]) == engine


def test_every_row_maps_onto_a_canonical_series() -> None:
    assert set(SERIES_TABLE.values()) <= set(CANONICAL)
    names = mapped_names()
    assert "vllm:gpu_cache_usage_perc" in names["kv_usage"]
    assert "vllm:kv_cache_usage_perc" in names["kv_usage"]


def test_labels_are_part_of_the_raw_key_sorted() -> None:
    samples, _ = parse_exposition('x{b="2",a="1"} 5\n')
    assert samples == {'x{a="1",b="2"}': 5.0}


@pytest.mark.parametrize("text", [ex.VLLM_V1, ex.VLLM_OLD, ex.SGLANG, ex.TGI, ex.LLAMACPP])
def test_a_light_parse_gives_the_same_series_from_mapped_lines_only(text: str) -> None:
    samples, full = parse_exposition(text)
    light_samples, light = parse_exposition(text, full=False)
    assert light == full
    assert set(light_samples) < set(samples) or set(light_samples) == set(samples)
    assert all(k.split("{")[0] in SERIES_TABLE for k in light_samples)
    assert parse_exposition(ex.UNKNOWN, full=False) == ({}, {})
