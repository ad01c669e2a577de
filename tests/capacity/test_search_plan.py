"""The capacity search as a plan: doubling from c=1, bisection to the integer, each probe's
verdict from its own rule, the time budget, and the clock of a scaled simulator."""

from __future__ import annotations

from collections.abc import Callable

from servecap.api.capacity.probe_rule import ProbeSettings
from servecap.api.capacity.search_plan import CapacitySearch
from servecap.core.config import SLO, on_clock
from servecap.core.summary import LevelSummary
from tests.api.test_verify import next_step
from tests.capacity.records import closed_records

SLO_P90 = SLO(ttft_ms=1000.0, tps=15.0, statistic="p90")


def drive(search: CapacitySearch, ttft_at: Callable[[int], float]) -> list[int]:
    """Run the plan as the engine does: feed each probe's records to its rule until it
    decides, then hand the plan the level's summary."""
    measured: list[int] = []
    steps = search.steps()
    summary = None
    while (step := next_step(steps, summary)) is not None:
        c = step.level.demand()
        measured.append(c)
        assert step.until is not None
        for record in closed_records(c, lambda i, c=c: ttft_at(c), step.level.n_requests):
            if step.until.seen(record):
                break
        summary = LevelSummary(concurrency=c, latency_mean_s=1.1, n_requests=60, n_ok=60)
    return measured


def test_doubles_then_bisects_to_the_integer_boundary():
    """P90 TTFT = 20 ms x c: c=50 meets 1,000 ms, c=51 does not."""
    search = CapacitySearch(SLO_P90, ProbeSettings(), budget_s=3600)
    measured = drive(search, lambda c: 20.0 * c)
    assert measured == [1, 2, 4, 8, 16, 32, 64, 48, 56, 52, 50, 51]
    result = search.result()
    assert (result.lower, result.upper) == (50, 51)
    assert [p.outcome.verdict for p in search.probes][-2:] == ["pass", "fail"]


def test_a_miss_at_one_stream_ends_the_search():
    search = CapacitySearch(SLO_P90, ProbeSettings(), budget_s=3600)
    assert drive(search, lambda c: 5000.0) == [1]
    assert search.result().status.value == "nothing_passes"


def test_no_time_left_stops_before_the_next_probe():
    search = CapacitySearch(SLO_P90, ProbeSettings(), budget_s=0.0)
    assert drive(search, lambda c: 10.0) == []
    assert search.out_of_time


def test_the_search_stops_at_its_maximum():
    search = CapacitySearch(SLO_P90, ProbeSettings(), budget_s=3600, max_concurrency=8)
    assert drive(search, lambda c: 10.0) == [1, 2, 4, 8]
    assert search.result().status.value == "not_found"


def test_a_scaled_simulator_is_judged_on_its_own_clock():
    """At x10 the server answers ten times faster: 1,000 ms of TTFT reads 100 ms."""
    scaled = on_clock(SLO_P90.model_copy(update={"think_time_s": 45.0}), 10.0)
    assert (scaled.ttft_ms, scaled.tps, scaled.think_time_s) == (100.0, 150.0, 4.5)
    slow_tokens = SLO_P90.model_copy(update={"tps": 5.0})  # the records' TPS is 100
    search = CapacitySearch(slow_tokens, ProbeSettings(), budget_s=3600)
    search.use_clock(10.0)
    drive(search, lambda c: 2.0 * c)  # 20 ms x c on the real clock
    assert (search.result().lower, search.result().upper) == (50, 51)
