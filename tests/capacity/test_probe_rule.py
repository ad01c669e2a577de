"""One probe's stopping rule: it decides on the complete prefix, crops a slow start, fails
on a failed request, refuses a drifting level, and errs no more often than it says."""

from __future__ import annotations

import numpy as np
import pytest

from servecap.api.capacity.probe_rule import NO_STEADY_STATE, ProbeRule, ProbeSettings
from servecap.core.config import SLO
from tests.capacity.records import closed_records

SLO_P90 = SLO(ttft_ms=1000.0, tps=15.0, statistic="p90")
SETTINGS = ProbeSettings(confidence=0.95, first_look=60)


def run_rule(rule: ProbeRule, records) -> int:
    """Feed records as the engine would; how many it took to decide (or all of them)."""
    seen = 0
    for record in records:
        seen += 1
        if rule.seen(record):
            break
    return seen


def test_a_clear_pass_is_decided_at_the_first_look():
    rule = ProbeRule(SLO_P90, 1, SETTINGS)
    used = run_rule(rule, closed_records(1, lambda i: 100.0, SETTINGS.cap()))
    assert rule.outcome.verdict == "pass"
    assert used == SETTINGS.first_look


def test_a_pass_a_long_warm_up_kept_from_the_first_look_is_decided_at_the_second():
    """20 slow draws, then a flat level: MSER-5 crops the 20, leaving 40 of the first look's
    60, fewer than the 46 a P90 pass needs; the second look (86 complete: 46 kept even
    after the largest crop) passes, where a doubled look would have waited for 120."""
    rule = ProbeRule(SLO_P90, 1, SETTINGS)
    used = run_rule(rule, closed_records(1, lambda i: 900.0 if i < 20 else 100.0 + i % 3,
                                         SETTINGS.cap()))
    assert rule.outcome.verdict == "pass" and rule.outcome.cropped == 20
    assert SETTINGS.pass_looks("p90") == [60, 86, 240]
    assert used == 86


def test_a_clear_miss_is_decided_long_before_the_cap():
    rule = ProbeRule(SLO_P90, 4, SETTINGS)
    used = run_rule(rule, closed_records(4, lambda i: 3000.0, SETTINGS.cap()))
    assert rule.outcome.verdict == "fail"
    assert used <= 30 + 4  # the first fail look, and what was in flight


def test_a_failed_request_fails_the_level_at_once():
    rule = ProbeRule(SLO_P90, 2, SETTINGS)
    run_rule(rule, closed_records(2, lambda i: 100.0, SETTINGS.cap(), failed_at=3))
    assert rule.outcome.verdict == "fail"
    assert rule.outcome.reason == "failed requests"


def test_a_knife_edge_does_not_pass():
    for seed in range(5):
        rng = np.random.default_rng(seed)
        draws = rng.normal(1000.0, 10.0, SETTINGS.cap())  # P90 at 1,013 ms: within noise
        rule = ProbeRule(SLO_P90, 1, SETTINGS)
        run_rule(rule, closed_records(1, lambda i, d=draws: float(d[i]), SETTINGS.cap()))
        assert rule.outcome.verdict in ("undecided", "fail")


def test_a_slow_start_is_cropped_and_the_window_starts_after_it():
    rule = ProbeRule(SLO_P90, 1, SETTINGS)
    slow_start = lambda i: 5000.0 if i < 10 else 100.0  # noqa: E731
    run_rule(rule, closed_records(1, slow_start, SETTINGS.cap()))
    assert rule.outcome.verdict == "pass"
    assert rule.outcome.cropped == 10
    window = rule.window()
    assert window is not None and window.warmup_s > 10.0  # ten requests of 6 s and more


def test_a_level_that_keeps_slowing_has_no_steady_state():
    rule = ProbeRule(SLO_P90, 1, SETTINGS)
    slowing = lambda i: 400.0 + 10.0 * i  # noqa: E731  crosses the SLO at i = 60
    run_rule(rule, closed_records(1, slowing, SETTINGS.cap()))
    assert rule.outcome.verdict in (NO_STEADY_STATE, "fail")
    assert rule.outcome.verdict != "pass"


def test_the_complete_prefix_waits_for_every_stream():
    """Three fast streams and one slow one: nothing is judged while the slow stream's first
    request is in flight, so the fast finishers alone never make a verdict."""
    rule = ProbeRule(SLO_P90, 4, SETTINGS)
    slow_stream = lambda i: 60_000.0 if i == 0 else 100.0  # noqa: E731
    records = list(closed_records(4, slow_stream, SETTINGS.cap()))
    fast = [r for r in records if r.request_id != 0][:100]
    assert not any(rule.seen(r) for r in fast)
    assert rule.outcome.n_judged == 0


@pytest.mark.slow
@pytest.mark.parametrize(("true_p90", "wrong"), [(1050.0, "pass"), (950.0, "fail")])
def test_wrong_verdicts_stay_within_the_nominal_rate(true_p90, wrong):
    """Seeded, 300 probes on a known lognormal TTFT whose P90 lies 5% on one side of the
    SLO: the verdict on the other side may come at most 5% of the time (the rule's
    1 - confidence; its Bonferroni split makes it conservative)."""
    rng = np.random.default_rng(11)
    sigma = 0.5
    median = true_p90 / np.exp(1.2816 * sigma)
    trials, wrongs = 300, 0
    for _ in range(trials):
        draws = rng.lognormal(np.log(median), sigma, SETTINGS.cap())
        rule = ProbeRule(SLO_P90, 1, SETTINGS)
        run_rule(rule, closed_records(1, lambda i, d=draws: float(d[i]), SETTINGS.cap()))
        wrongs += rule.outcome.verdict == wrong
    assert wrongs / trials <= 1 - SETTINGS.confidence



@pytest.mark.parametrize("c", [18, 20, 24])
def test_a_first_round_queued_by_a_serial_stage_is_not_read_as_the_level(monkeypatch, c):
    """The `known-boundary` profile below its C_max of 24: c requests sent at once queue in
    a 200 ms serial stage (TTFT 300 ms + 200 ms for each ahead), then every TTFT is the
    steady max(300, 200c - 3,900) ms, each request decoding for 3.9 s. A fail look on the
    first 30 complete requests saw the queue (MSER-5 crops at most half) and failed the
    level; from two first rounds on the crop takes it, and the level passes."""
    monkeypatch.setattr("tests.capacity.records.DECODE_MS", 3900.0)
    steady = max(300.0, 200.0 * c - 3900.0)
    rule = ProbeRule(SLO_P90, c, SETTINGS)
    queued = lambda i: max(300.0 + 200.0 * i, steady) if i < c else steady  # noqa: E731
    run_rule(rule, closed_records(c, queued, SETTINGS.cap()))
    assert rule.outcome.verdict == "pass"
