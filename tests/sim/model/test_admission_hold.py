"""The admission hold in the step engine (sim/admission_hold.py): its mean in time, in steps
and with a knee, its shape, and the gather window that lets a batch's stragglers skip it."""

from __future__ import annotations

import numpy as np
import pytest

from servecap.sim.model.emissions import Emission
from servecap.sim.model.params import ModelParams
from servecap.sim.model.step_engine import StepEngine
from tests.sim.model.test_model import SIMPLE, _first_token_wait, times_of


def test_admission_hold_is_memoryless_with_the_interval_as_mean() -> None:
    p = SIMPLE.model_copy(update={"frontend_ms": 0.0, "admission": "hold_ms",
                                   "admit_interval_ms": 200.0})
    waits = np.array([_first_token_wait(p, seed, arrive=0.5) for seed in range(300)])
    assert np.mean(waits) == pytest.approx(0.2 + 0.02, rel=0.15)
    # exponential, not a fixed gate: about a third of the waits exceed the mean hold
    assert 0.25 < np.mean(waits > 0.2 + 0.015) < 0.45


def test_admission_hold_in_steps_scales_with_the_step_time() -> None:
    # the same 5-step hold is 50 ms with 10 ms steps and 100 ms with 20 ms steps
    means = []
    for step_ms in (10.0, 20.0):
        p = SIMPLE.model_copy(update={"frontend_ms": 0.0, "step_base_ms": step_ms,
                                      "admit_hold_steps": 5.0, "admit_interval_ms": 999.0,
                                      "admission": "hold_steps"})
        means.append(np.mean([_first_token_wait(p, seed, arrive=0.5) for seed in range(300)]))
    assert means[0] == pytest.approx(0.05 + 0.02, rel=0.15)
    assert means[1] == pytest.approx(0.10 + 0.04, rel=0.15)


def _wait_beside(params: ModelParams, seed: int, running: int, ahead: int = 0) -> float:
    """TTFT of a request that reaches an engine 0.5 s into decoding ``running`` long ones, at
    the same instant as ``ahead`` one-token requests queued before it."""
    eng = StepEngine(params, seed=seed)
    for rid in range(running):
        eng.add(rid, 10, 10_000, 0.0)
    me = running + ahead
    ev: list[tuple[float, Emission]] = []
    added = False
    while True:
        t = eng.next_time()
        assert t is not None
        if not added and t >= 0.5:
            for rid in range(running, me + 1):
                eng.add(rid, 10, 1, 0.5)
            added = True
            continue
        ev += [(t, e) for e in eng.advance(t)]
        if added and any(e.rid == me for _, e in ev):
            return times_of(ev, me)[0] - 0.5


KNEE = SIMPLE.model_copy(update={"frontend_ms": 0.0, "admit_hold_steps": 20.0,
                                 "admit_hold_knee": 4.0, "admission": "hold_knee"})  # fmt: skip


@pytest.mark.slow
def test_knee_hold_grows_with_the_running_batch_up_to_the_knee() -> None:
    # 20 steps at the knee (4 running) and past it (8); a quarter of that beside 1. A decode
    # step is 10 ms + 1 ms a sequence; the request's own prefill step adds about one more
    means = {n: np.mean([_wait_beside(KNEE, seed, n) for seed in range(200)]) for n in (1, 4, 8)}
    assert means[1] == pytest.approx(5 * 0.011 + 0.013, rel=0.2)
    assert means[4] == pytest.approx(20 * 0.014 + 0.016, rel=0.2)
    assert means[8] == pytest.approx(20 * 0.018 + 0.020, rel=0.2)


def test_knee_hold_counts_the_requests_waiting_as_well_as_the_running() -> None:
    # beside 1 running and 3 queued just ahead of it, a request is held as beside 4 (20
    # steps), not as beside 1 (5): a lock-step cohort reaching an engine that has just
    # admitted its first member is held as the seed's concurrency says
    alone = np.mean([_wait_beside(KNEE, seed, 1) for seed in range(200)])
    queued = np.mean([_wait_beside(KNEE, seed, 1, ahead=3) for seed in range(200)])
    assert alone == pytest.approx(5 * 0.011 + 0.013, rel=0.2)
    assert queued > 2.5 * alone


def test_knee_hold_shape_narrows_its_spread_at_the_same_mean() -> None:
    waits = {shape: np.array([_wait_beside(KNEE.model_copy(update={"admit_hold_shape": shape}),
                                           seed, 4) for seed in range(300)])
             for shape in (1.0, 8.0)}  # fmt: skip
    assert np.mean(waits[8.0]) == pytest.approx(np.mean(waits[1.0]), rel=0.15)
    # a gamma(8)'s spread is 1/sqrt(8) of its mean, an exponential's all of it
    assert np.std(waits[8.0]) < 0.5 * np.std(waits[1.0])


def test_knee_hold_counts_decode_steps_not_a_prefill_step() -> None:
    """A request drawn its hold just after a long prefill step is held for decode steps of
    the running batch (about 12 ms each here), not for steps as long as that prefill."""
    p = KNEE.model_copy(update={"admit_hold_steps": 5.0, "admit_hold_knee": 1.0})
    waits = []
    for seed in range(100):
        eng = StepEngine(p, seed=seed)
        eng.add(0, 10, 10_000, 0.0)
        eng.add(1, 3000, 10_000, 0.0 + 0.3)  # its prefill step: 10 + 300 ms
        arrived, ev = None, []
        while (t := eng.next_time()) is not None and t < 5.0:
            ev += [(t, e) for e in eng.advance(t)]
            if arrived is None and (eng.next_time() or t) - t > 0.2:  # the prefill step began
                arrived = t + 0.01  # and this one reaches the scheduler while it runs
                eng.add(2, 10, 1, arrived)
            if arrived is not None and any(e.rid == 2 for _, e in ev):
                break
        assert arrived is not None
        waits.append(times_of(ev, 2)[0] - arrived)
    # the rest of the 310 ms prefill step, then about 5 decode steps of 12-13 ms
    assert np.mean(waits) < 0.31 + 0.15


def test_gather_window_lets_late_stragglers_join_without_a_hold() -> None:
    p = SIMPLE.model_copy(
        update={"frontend_ms": 0.0, "admission": "hold_ms", "admit_interval_ms": 1000.0,
                "gather_ms": 25.0}
    )
    assert _first_token_wait(p, 0, arrive=0.015) < 0.1  # joins the batch just started
    assert np.mean([_first_token_wait(p, s, arrive=0.5) for s in range(20)]) > 0.3
