"""Comparison and headline on synthetic request records (no servers): the same profile at
two step costs 10% apart, and two identical targets."""

from __future__ import annotations

import numpy as np
import pytest

from servecap.analysis.capacity_delta import headline
from servecap.analysis.comparison import Repeats, compare_targets
from servecap.core.config import SLO
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord

TOKENS = 64


def _records(rng: np.random.Generator, c: int, step_ms: float, n: int) -> list[RequestRecord]:
    """Requests whose TTFT and per-token time grow with c (a saturating engine), jittered."""
    out = []
    for i in range(n):
        ttft_ms = step_ms * 5 * (1 + c / 4) * rng.gamma(50, 1 / 50)
        itl_ms = step_ms * (1 + c / 8) * rng.gamma(50, 1 / 50)
        sent = 1_000_000_000 * i
        first = sent + int(ttft_ms * 1e6)
        end = first + int(itl_ms * 1e6 * (TOKENS - 1))
        out.append(RequestRecord(
            request_id=i, concurrency=c, stream_index=0, scheduled_at=sent, sent_at=sent,
            first_token_at=first, last_token_at=end, ended_at=end, completion_tokens=TOKENS,
            chunk_at=[first, end], chunk_tokens=[1, TOKENS - 1],
        ))
    return out


def _target(seed: int, step_ms: float, repeats: int = 3) -> dict[LevelKey, Repeats]:
    rng = np.random.default_rng(seed)
    return {
        LevelKey.closed(c): [_records(rng, c, step_ms, 60) for _ in range(repeats)]
        for c in (1, 2, 4, 8, 16, 32)
    }


def test_ten_percent_cheaper_steps_come_out_b_better_and_covered() -> None:
    samples = {"a": _target(1, 11.0), "b": _target(2, 10.0)}
    (pair,) = compare_targets(samples, interleaved=True, seed=3)
    for level in pair.levels:
        tps = level.diffs[("tps", "mean")]
        assert tps.better.value == "b"
        # TPS = N / latency and latency scales with the step cost: the true ratio is 1.1
        assert tps.ratio is not None and tps.ratio.contains(1.1)
        ttft = level.diffs[("ttft_ms", "mean")]
        assert ttft.better.value == "b"
        true_gap = -1.0 * 5 * (1 + level.level.value / 4)  # 10 ms vs 11 ms steps
        assert ttft.difference.contains(true_gap)


@pytest.mark.slow
def test_identical_targets_no_significant_difference_in_nine_of_ten() -> None:
    none = 0
    for seed in range(10):
        samples = {"a": _target(10 + seed, 10.0), "b": _target(50 + seed, 10.0)}
        (pair,) = compare_targets(samples, interleaved=True, seed=seed)
        tps = next(lv for lv in pair.levels if lv.level.value == 4).diffs[("tps", "mean")]
        none += tps.better.value == "none"
    assert none >= 9


def test_headline_capacity_users_and_speedups() -> None:
    # SLO: TPS >= 40 per user; a's steps cost 11 ms, b's 10 ms, so b holds a higher level
    samples = {"a": _target(1, 11.0), "b": _target(2, 10.0)}
    (pair,) = compare_targets(samples, interleaved=True, seed=3)
    slo = SLO(ttft_ms=1000, tps=40.0, statistic="p90", think_time_s=10)
    head = headline(pair, slo)
    assert head.a.c_max is not None and head.b.c_max is not None
    assert head.b.c_max >= head.a.c_max
    for cap in (head.a, head.b):
        assert cap.c_max_low is None or cap.c_max_low <= cap.c_max
        assert cap.c_max_high is not None and cap.c_max <= cap.c_max_high
        assert cap.users is not None and cap.users_high is not None
        assert (cap.users_low or 0) <= cap.users <= cap.users_high
    assert head.users_difference is not None
    d = head.users_difference
    assert d.low <= d.estimate <= d.high
    assert len(head.speedups) == 6
    assert all(s.ratio.low <= s.ratio.estimate <= s.ratio.high for s in head.speedups)
    assert head.break_even is None  # b is faster at every level
    assert any("users" in s for s in head.sentences)
    assert head.interleaved


def test_break_even_has_an_interval_where_the_ratio_crosses_one() -> None:
    # b is faster at low load and slower at high load (speculative decoding's shape)
    rng = np.random.default_rng(4)
    a: dict[LevelKey, Repeats] = {}
    b: dict[LevelKey, Repeats] = {}
    for c, factor in ((1, 0.6), (2, 0.7), (4, 0.85), (8, 1.2), (16, 1.5)):
        key = LevelKey.closed(c)
        a[key] = [_records(rng, c, 10.0, 60) for _ in range(3)]
        b[key] = [_records(rng, c, 10.0 * factor, 60) for _ in range(3)]
    (pair,) = compare_targets({"a": a, "b": b}, interleaved=False, seed=1)
    head = headline(pair, SLO())
    assert head.break_even is not None and 4 < head.break_even < 8
    assert head.break_even_low is not None and head.break_even_high is not None
    assert head.break_even_low <= head.break_even <= head.break_even_high
    assert any("not interleaved" in s for s in head.sentences)


def test_explicit_pairs_choose_baseline_and_compared() -> None:
    samples = {"x": _target(1, 10.0), "y": _target(2, 10.0), "z": _target(3, 10.0)}
    default = compare_targets(samples, interleaved=True, resamples=50)
    assert [(p.a, p.b) for p in default] == [("x", "y"), ("x", "z")]
    chosen = compare_targets(samples, interleaved=True, resamples=50, pairs=[("z", "y")])
    assert [(p.a, p.b) for p in chosen] == [("z", "y")]
