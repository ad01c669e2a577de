"""The rate search alone (doubling, halving, bisection to a resolution) against fake verdict
functions, and as a plan whose open-loop probes stop on their own rule; seeded."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

import pytest

from servecap.api.capacity.open_probe_rule import OFF_SCHEDULE, OpenProbeRule
from servecap.api.capacity.probe_rule import ProbeSettings
from servecap.api.capacity.rate_search import RateCapacitySearch, RateSearch
from servecap.core.config import SLO
from servecap.core.records import RequestRecord
from servecap.core.summary import LevelSummary
from servecap.kinds.open_loop import KIND
from servecap.stats.search import SearchStatus
from tests.api.test_verify import next_step

SLO_P90 = SLO(ttft_ms=1000.0, tps=15.0, statistic="p90")
MS = 1_000_000
DECODE_MS = 1000.0  # 100 tokens at 10 ms: TPS 100 whatever the TTFT


def run_search(search: RateSearch, passes: Callable[[float], bool]) -> list[float]:
    measured = []
    while (rate := search.next_probe()) is not None:
        measured.append(rate)
        search.record(rate, passes(rate))
    return measured


def test_doubles_until_a_miss_then_bisects_to_the_resolution():
    search = RateSearch(1.0, resolution=0.05)
    measured = run_search(search, lambda rate: rate <= 6.3)
    assert measured == [1, 2, 4, 8, 6, 7, 6.5, 6.25]
    result = search.result()
    assert result.status is SearchStatus.CONVERGED
    assert (result.lower, result.upper) == (6.25, 6.5)
    assert result.upper - result.lower <= 0.05 * result.lower


def test_a_miss_at_the_start_halves_until_a_pass():
    search = RateSearch(1.0, resolution=0.1)
    measured = run_search(search, lambda rate: rate <= 0.3)
    assert measured[:3] == [1, 0.5, 0.25]
    assert (search.result().lower, search.result().upper) == (0.2969, 0.3125)


def test_nothing_passes_after_six_halvings():
    search = RateSearch(2.0)
    assert run_search(search, lambda rate: False) == [2, 1, 0.5, 0.25, 0.125, 0.0625, 0.03125]
    result = search.result()
    assert result.status is SearchStatus.NOTHING_PASSES and result.lower is None


def test_the_budget_ends_a_search_with_no_miss():
    search = RateSearch(1.0, budget=3)
    assert run_search(search, lambda rate: True) == [1, 2, 4]
    assert search.result().status is SearchStatus.NOT_FOUND


@pytest.mark.parametrize("seed", range(20))
def test_noisy_verdicts_never_put_a_pass_above_a_miss(seed):
    """Near the boundary a verdict is a coin toss; whatever it says, every probe lies inside
    the bracket so far, so the answer's pass lies below its miss, within the resolution."""
    rng = random.Random(seed)
    boundary = rng.uniform(0.5, 50.0)

    def noisy(rate: float) -> bool:
        near = abs(rate - boundary) < 0.1 * boundary
        return rng.random() < 0.5 if near else rate <= boundary

    search = RateSearch(1.0, resolution=0.05)
    run_search(search, noisy)
    result = search.result()
    passes = [p.rate for p in result.probes if p.passed]
    misses = [p.rate for p in result.probes if not p.passed]
    if result.status is SearchStatus.CONVERGED:
        assert result.lower == max(passes) and result.upper is not None
        assert result.upper == min(m for m in misses if m > result.lower)
        assert result.upper - result.lower <= 0.05 * result.lower


@pytest.mark.parametrize(("start", "resolution"), [(0.0, 0.05), (float("nan"), 0.05),
                                                   (1.0, 0.0), (1.0, 1.5)])
def test_bad_arguments_raise(start, resolution):
    with pytest.raises(ValueError):
        RateSearch(start, resolution)


def open_records(
    rate: float, ttft_ms: Callable[[int], float], n: int, late_ms: float = 0.0,
    waited: bool = False,
) -> Iterator[RequestRecord]:
    """`n` records of an open level at `rate` (arrivals evenly spaced), in the order they END;
    arrival i's TTFT from its target is `ttft_ms(i)`; each sent `late_ms` after its target."""
    pending = []
    for i in range(n):
        target = round(i / rate * 1e9)
        record = RequestRecord.for_level(KIND.key(rate), i, i, target)
        record.sent_at = target + int(late_ms * MS)
        if waited:
            record.admitted_at = record.sent_at
        record.first_token_at = target + int(ttft_ms(i) * MS)
        record.last_token_at = record.ended_at = record.first_token_at + int(DECODE_MS * MS)
        record.completion_tokens = 100
        pending.append(record)
    yield from sorted(pending, key=lambda r: r.ended_at or 0)


def drive(plan: RateCapacitySearch, ttft_at: Callable[[float], float]) -> list[float]:
    """Run the plan as the engine does: each probe's records to its rule until it decides."""
    measured: list[float] = []
    steps = plan.steps()
    summary = None
    while (step := next_step(steps, summary)) is not None:
        rate = float(step.level.key.value)
        measured.append(rate)
        assert step.until is not None
        for record in open_records(rate, lambda i, r=rate: ttft_at(r), step.level.n_requests):
            if step.until.seen(record):
                break
        summary = LevelSummary(level=str(step.level.key), latency_mean_s=1.1, n_requests=60,
                               n_ok=60)
    return measured


def test_the_plan_searches_open_probes_that_stop_on_their_verdict():
    """P90 TTFT = 20 ms x rate: 50/s meets 1,000 ms, more does not."""
    plan = RateCapacitySearch(SLO_P90, ProbeSettings(), budget_s=3600, start_rate=1.0)
    measured = drive(plan, lambda rate: 20.0 * rate)
    assert measured[:7] == [1, 2, 4, 8, 16, 32, 64]
    result = plan.result()
    assert result.lower is not None and result.upper is not None
    assert result.lower <= 50.0 < result.upper <= 1.05 * result.lower
    assert all(p.outcome.n_judged <= ProbeSettings().cap() for p in plan.probes)
    assert plan.probes[-1].outcome.verdict in ("pass", "fail")


def test_a_scaled_simulator_is_offered_the_scaled_rate():
    """At x10 the server answers ten times faster: it is offered 10 x the rate, judged on
    TTFT / 10, and the bracket reads on real time."""
    plan = RateCapacitySearch(SLO_P90.model_copy(update={"tps": 5.0}), ProbeSettings(),
                              budget_s=3600, start_rate=1.0)
    plan.use_clock(10.0)
    measured = drive(plan, lambda offered: 2.0 * offered / 10)  # 20 ms x real rate, / 10
    assert measured[:3] == [10, 20, 40]
    result = plan.result()
    assert result.lower is not None and result.lower <= 50.0 < (result.upper or 0)


def test_no_time_left_stops_before_the_first_probe():
    plan = RateCapacitySearch(SLO_P90, ProbeSettings(), budget_s=0.0, start_rate=1.0)
    assert drive(plan, lambda rate: 10.0) == []
    assert plan.out_of_time


def judge(rule: OpenProbeRule, records: Iterator[RequestRecord]) -> str:
    for record in records:
        if rule.seen(record):
            break
    return rule.outcome.verdict


def test_arrivals_waiting_for_the_cap_are_a_miss():
    rule = OpenProbeRule(SLO_P90, ProbeSettings())
    assert judge(rule, open_records(2.0, lambda i: 50.0, 240, waited=True)) == OFF_SCHEDULE
    assert "queue growing" in rule.outcome.reason


def test_a_client_sending_late_is_a_miss():
    rule = OpenProbeRule(SLO_P90, ProbeSettings())
    assert judge(rule, open_records(2.0, lambda i: 50.0, 240, late_ms=25.0)) == OFF_SCHEDULE
    assert "client behind schedule" in rule.outcome.reason


def test_a_rising_ttft_is_the_queue_growing():
    """Arrivals outpace the server: each waits longer than the last."""
    rule = OpenProbeRule(SLO.model_copy(SLO_P90, update={"ttft_ms": 1e9}), ProbeSettings())
    assert judge(rule, open_records(2.0, lambda i: 50.0 + 20.0 * i, 240)) == OFF_SCHEDULE
    assert rule.outcome.reason == "queue growing: TTFT rises through the probe"
    assert rule.outcome.n_judged < ProbeSettings().cap()  # it need not wait for its cap


def test_ttft_is_judged_from_the_arrival():
    """Sent 0.5 s late by a full cap, TTFT 50 ms from the send is 550 ms from the arrival."""
    rule = OpenProbeRule(SLO_P90.model_copy(update={"ttft_ms": 300.0}), ProbeSettings())
    records = open_records(2.0, lambda i: 550.0, 240, late_ms=0.0)
    assert judge(rule, records) == "fail"


def test_one_late_send_is_a_hiccup_not_a_client_behind():
    """One arrival in thirty sent 40 ms late: its p99, not its p90."""
    rule = OpenProbeRule(SLO_P90, ProbeSettings())
    records = list(open_records(2.0, lambda i: 50.0, 240))
    for record in records[::30]:
        record.sent_at = (record.sent_at or 0) + 40 * MS
    assert judge(rule, iter(records)) == "pass"


def test_a_pass_whose_later_arrivals_fell_behind_is_off_schedule():
    """The rule judged the prefix; the arrivals sent after it, before the level stopped,
    were all late: the level did not keep its schedule."""
    rule = OpenProbeRule(SLO_P90, ProbeSettings())
    assert judge(rule, open_records(2.0, lambda i: 50.0, 60)) == "pass"
    for record in open_records(2.0, lambda i: 50.0, 120, late_ms=30.0):
        if record.stream_index >= 60:
            assert rule.seen(record)  # decided: each ends in flight, and is still seen
    assert rule.final().verdict == OFF_SCHEDULE
