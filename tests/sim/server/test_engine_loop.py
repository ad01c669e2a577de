"""The engine loop's delivery: first tokens flushed before the rest, latenesses counted."""

from __future__ import annotations

import asyncio
import contextlib
import time

import pytest

from servecap.sim.model.emissions import Emission, StepEmissions
from servecap.sim.model.engines import make_engine
from servecap.sim.model.step_engine import Engine
from servecap.sim.profiles import builtin_profile
from servecap.sim.server.engine_loop import EngineLoop, Lateness


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
    first = [Emission(ids[0], 1, True, False), Emission(ids[1], 1, True, False)]
    rest = [Emission(ids[2], 1, False, False), Emission(ids[3], 1, False, True)]
    loop._deliver(StepEmissions(first, rest), time.monotonic())
    assert batch.flushes == [[ids[0], ids[1]], [ids[2], ids[3]]]
    assert (loop.first_tokens.count, loop.chunks.count, loop.requests_done) == (2, 4, 1)
    assert loop.write_seconds <= loop.deliver_seconds


def test_a_step_of_only_first_tokens_or_none_flushes_once() -> None:
    batch = _Batch()
    loop = EngineLoop(builtin_profile("deterministic").params, batch=batch)
    rid = loop.submit(4, 8, lambda rid: _Sink(batch, rid))
    loop._deliver(StepEmissions([Emission(rid, 1, True, False)], []), time.monotonic())
    loop._deliver(StepEmissions([], []), time.monotonic())
    assert batch.flushes == [[rid], []]
    assert (loop.first_tokens.count, loop.chunks.count) == (1, 1)


def _drain(engine: Engine, until: float) -> list[StepEmissions]:
    steps = []
    for _ in range(10_000):  # bounded: a few hundred steps serve these requests
        due = engine.next_time()
        if due is None or due > until:
            break
        step = engine.finish(due)
        steps.append(StepEmissions(list(step.first), list(step.rest)))
        engine.plan()
    return steps


@pytest.mark.parametrize("profile", ["vllm-direct", "deterministic"])
def test_every_first_token_is_in_its_steps_first_phase(profile: str) -> None:
    engine = make_engine(builtin_profile(profile).params, seed=1)
    for rid in range(6):
        engine.add(rid, 64, 8, rid * 0.013)  # staggered: later prefills join running decodes
    steps = _drain(engine, 60.0)
    firsts = [em.rid for step in steps for em in step.first]
    assert sorted(firsts) == list(range(6))
    assert all(em.first for step in steps for em in step.first)
    assert not any(em.first for step in steps for em in step.rest)
    if profile == "vllm-direct":  # the step model's later prefills share steps with decodes
        assert any(step.first and step.rest for step in steps)


def test_a_fixed_schedule_puts_a_late_first_chunk_in_the_first_phase() -> None:
    # heap order is by time: request 0's second chunk (due 0.09) comes before request 1's
    # first (due 0.1); handed over as one list, request 1's TTFT write would count as a chunk
    engine = make_engine(builtin_profile("deterministic").params)
    engine.add(0, 4, 64, 0.0)
    engine.add(1, 4, 64, 0.05)
    engine.finish(0.05)
    step = engine.finish(0.2)
    assert [em.rid for em in step.first] == [1]
    assert next(iter(step.rest)).rid == 0  # due before request 1's first chunk


async def test_the_loop_times_every_first_token_it_writes() -> None:
    """A change that lets first tokens pass as ordinary chunks (in the engine or in the
    loop's delivery) drops TTFT from ``first_tokens``; this counts them end to end."""
    batch = _Batch()
    loop = EngineLoop(builtin_profile("vllm-direct").params, time_scale=20.0, batch=batch)
    task = asyncio.create_task(loop.run())
    try:
        for _ in range(5):
            loop.submit(64, 6, lambda rid: _Sink(batch, rid))
            await asyncio.sleep(0.002)  # pace: requests arrive apart
        for _ in range(2000):  # bounded wait: the requests take well under a second
            if loop.requests_done == 5:
                break
            await asyncio.sleep(0.005)  # poll
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert loop.requests_done == 5
    assert loop.first_tokens.count == 5
    assert loop.chunks.count > loop.first_tokens.count
