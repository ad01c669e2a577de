"""Splitting a level over workers (sans-I/O) and the messages that carry it."""

from __future__ import annotations

import pytest

from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.kinds.closed import ClosedLoad
from servecap.kinds.fixed import FixedLevel
from servecap.kinds.open_loop import OpenLoad, level_offsets_ns
from servecap.kinds.planned import PlannedLevel
from servecap.kinds.sessions import SessionsLoad
from servecap.load.shares import STREAMS_PER_WORKER, auto_workers, split_level
from servecap.load.worker_wire import (
    decode,
    encode,
    level_from_wire,
    level_to_wire,
    record_from_wire,
    record_to_wire,
    shift_record,
)
from servecap.workload.sources import PlannedRequest


@pytest.mark.parametrize(("c", "rounds", "n"), [(1, 10, 2), (5, 3, 2), (64, 10, 3), (7, 1, 4)])
def test_closed_streams_and_requests_add_up(c, rounds, n):
    level = ClosedLoad(concurrency=[c], rounds=rounds).levels()[0]
    shares = split_level(level, n)
    assert sum(s.level.concurrency for s in shares) == c
    assert sum(s.level.n_requests for s in shares) == c * rounds
    # stream offsets tile the level's stream indices 0..c-1 without overlap
    covered = [s.stream_offset + i for s in shares for i in range(s.level.concurrency)]
    assert sorted(covered) == list(range(c))
    assert len(shares) == min(c, n)


def test_open_loop_targets_are_the_one_schedule_dealt_out():
    level = OpenLoad(rates=[20.0], duration_s=3.0, seed=4, warmup_s=0, cooldown_s=0).levels()[0]
    offsets = level_offsets_ns(level)
    shares = split_level(level, 3)
    dealt = sorted(t for s in shares for t in s.level.targets)
    assert dealt == list(enumerate(offsets))  # every arrival once, at its own target
    assert all(isinstance(s.level, PlannedLevel) and s.level.cap is not None for s in shares)
    assert sum(s.level.cap for s in shares) >= level.max_concurrency


def test_sessions_share_the_users_by_part():
    level = SessionsLoad(users=[10], think="exp:1", turns="2", ramp_s=1, duration_s=5).levels()[0]
    shares = split_level(level, 3)
    assert [s.part for s in shares] == [(0, 3), (1, 3), (2, 3)]
    assert all(s.level == level for s in shares)


class _Rows:
    """A trace source's one method a replay's split reads: row i, at offset i seconds."""

    def request(self, i):
        return PlannedRequest(i, (), 8, 1, offset_s=float(i))


def test_replay_needs_row_offsets_and_uses_them():
    from servecap.kinds.replay import ReplayLevel

    level = ReplayLevel(key=LevelKey("speed", 2.0, "x"), n_requests=4, speed=2.0)
    with pytest.raises(TypeError, match="trace source"):
        split_level(level, 2)
    shares = split_level(level, 2, _Rows())
    assert shares[0].level.targets == ((0, 0), (2, 1_000_000_000))
    assert shares[1].level.replay


def test_auto_is_one_process_until_one_core_is_not_enough():
    small = ClosedLoad(concurrency=[STREAMS_PER_WORKER], rounds=1).levels()[0]
    large = ClosedLoad(concurrency=[4 * STREAMS_PER_WORKER], rounds=1).levels()[0]
    assert auto_workers(small, cores=8) == 1
    assert auto_workers(large, cores=8) == 4
    assert auto_workers(large, cores=2) == 2


@pytest.mark.parametrize("level", [
    ClosedLoad(concurrency=[3], rounds=2).levels()[0],
    OpenLoad(rates=[2.0], requests=5, warmup_s=0, cooldown_s=0).levels()[0],
    SessionsLoad(users=[4], think="fixed:1", turns="uniform:1:3").levels()[0],
    FixedLevel(key=LevelKey("fixed", 2), n_requests=2, offsets_ns=(0, 5)),
    PlannedLevel(key=LevelKey("rate", 2.0, "/s"), n_requests=2, targets=((0, 0), (3, 9)), cap=4),
])
def test_levels_travel_as_json(level):
    line = encode({"op": "level", "level": level_to_wire(level)})
    assert level_from_wire(decode(line)["level"]) == level


def test_records_travel_and_change_clocks_exactly():
    record = RequestRecord.for_level(LevelKey("rate", 2.0, "/s"), 7, 3, 1_000)
    record.sent_at, record.first_token_at, record.ended_at = 1_010, 1_500, 2_000
    record.chunk_at = [1_500, 1_700]
    back = record_from_wire(decode(encode({"op": "r", "rec": record_to_wire(record)}))["rec"])
    assert back == record
    shift_record(back, -1_000)
    assert (back.scheduled_at, back.sent_at, back.ended_at) == (0, 10, 1_000)
    assert back.chunk_at == [500, 700]
    assert back.first_token_at - back.sent_at == record.first_token_at - record.sent_at


def test_a_message_must_be_an_object_with_an_op():
    with pytest.raises(ValueError):
        decode(b"[1, 2]\n")


def test_the_pool_is_sized_without_running_an_adaptive_plan_ahead():
    from servecap.api.run.plans import StaticPlan
    from servecap.api.run.run_config import RunConfig
    from servecap.api.run.run_workers import pool_size

    class Adaptive:
        def steps(self):
            raise AssertionError("an adaptive plan's levels are decided as it runs")

        def known_levels(self):
            return None

        def max_in_flight(self):
            return 3 * STREAMS_PER_WORKER

        def expected_requests(self):
            return 1

    assert pool_size(RunConfig(), Adaptive(), cores=8) == 3
    assert pool_size(RunConfig(workers=5), Adaptive(), cores=2) == 5  # asked for: as asked
    closed = StaticPlan(ClosedLoad(concurrency=[1, 2 * STREAMS_PER_WORKER], rounds=1))
    assert pool_size(RunConfig(), closed, cores=8) == 2
    one = StaticPlan(ClosedLoad(concurrency=[64], rounds=1))
    assert pool_size(RunConfig(), one, cores=8) == 1


def test_workers_asked_for_are_capped_at_the_streams_a_level_holds():
    """`--workers 1000` for a one-stream level starts one process, not hundreds."""
    from servecap.api.run.plans import StaticPlan
    from servecap.api.run.run_config import RunConfig
    from servecap.api.run.run_workers import pool_size

    one = StaticPlan(ClosedLoad(concurrency=[1], rounds=1))
    assert pool_size(RunConfig(workers=1000), one, cores=2) == 1
    two = StaticPlan(ClosedLoad(concurrency=[1, 8], rounds=1))
    assert pool_size(RunConfig(workers=3), two, 2) == 3
