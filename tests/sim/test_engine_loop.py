"""The engine loop's delivery: first tokens flushed before the rest, latenesses counted."""

from __future__ import annotations

import time

import pytest

from servecap.sim.engine_loop import EngineLoop, Lateness
from servecap.sim.model import Emission
from servecap.sim.profiles import builtin_profile


class _Batch:
    """Records what was emitted between ``begin`` and each ``flush``."""

    def __init__(self) -> None:
        self.open = False
        self.held: list[int] = []
        self.flushes: list[list[int]] = []

    def begin(self) -> None:
        self.open = True

    def flush(self) -> None:
        self.open = False
        self.flushes.append(self.held)
        self.held = []


class _Sink:
    def __init__(self, batch: _Batch, rid: int) -> None:
        self.batch, self.rid = batch, rid

    def emit(self, em: Emission) -> None:
        assert self.batch.open, "a sink writes only while the step's batch is open"
        self.batch.held.append(self.rid)


def test_add_spread_counts_the_kth_of_n_writes_at_its_share_of_the_span() -> None:
    late = Lateness()
    late.add_spread(3, 1.0, 4.0)  # writes land at 2, 3 and 4
    assert (late.count, late.total, late.max) == (3, pytest.approx(9.0), 4.0)
    late.add_spread(0, 5.0, 9.0)
    assert late.count == 3


def test_a_steps_first_tokens_are_flushed_before_its_other_chunks() -> None:
    batch = _Batch()
    loop = EngineLoop(builtin_profile("deterministic").params, batch=batch)
    ids = [loop.submit(4, 8, lambda rid: _Sink(batch, rid)) for _ in range(4)]
    emissions = [Emission(ids[0], 1, True, False), Emission(ids[1], 1, True, False)]
    emissions += [Emission(ids[2], 1, False, False), Emission(ids[3], 1, False, True)]
    loop._deliver(emissions, time.monotonic())
    assert batch.flushes == [[ids[0], ids[1]], [ids[2], ids[3]]]
    assert (loop.first_tokens.count, loop.chunks.count, loop.requests_done) == (2, 4, 1)
    assert loop.write_seconds <= loop.deliver_seconds


def test_a_step_of_only_first_tokens_or_none_flushes_once() -> None:
    batch = _Batch()
    loop = EngineLoop(builtin_profile("deterministic").params, batch=batch)
    rid = loop.submit(4, 8, lambda rid: _Sink(batch, rid))
    loop._deliver([Emission(rid, 1, True, False)], time.monotonic())
    loop._deliver([], time.monotonic())
    assert batch.flushes == [[rid], []]
    assert (loop.first_tokens.count, loop.chunks.count) == (1, 1)
