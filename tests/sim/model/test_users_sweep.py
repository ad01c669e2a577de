"""N users thinking between requests, in virtual time (`sim.users_sweep`)."""

from __future__ import annotations

import random

import pytest

from servecap.sim.model.params import ModelParams
from servecap.sim.model.sweep import closed_loop_requests
from servecap.sim.model.users_sweep import users_level
from servecap.sim.profiles import load_profile


def test_users_keep_what_littles_law_says_in_flight() -> None:
    """The time-weighted mean in flight over the window is N R / (R + Z), R the requests' own
    mean latency and Z the think draws' mean (within the window's sampling error)."""
    rng = random.Random(1)
    draws: list[float] = []

    def think() -> float:
        draws.append(rng.expovariate(1 / 20.0))
        return draws[-1]

    level = users_level(load_profile("vllm-direct").params, 120, think, 10.0, 200.0, seed=1)
    r = sum(q.latency_s for q in level.requests) / len(level.requests)
    z = sum(draws) / len(draws)
    assert level.mean_in_flight == pytest.approx(120 * r / (r + z), rel=0.05)
    # about N / (R + Z) requests a second were sent within the window, each one finished
    assert len(level.requests) == pytest.approx(200.0 * 120 / (r + z), rel=0.1)
    assert all(10.0 <= q.sent <= 210.0 and q.tokens == 128 for q in level.requests)


def test_the_same_seeds_give_the_same_requests() -> None:
    params = load_profile("sglang-spec").params

    def run() -> list[float]:
        rng = random.Random(7)
        level = users_level(params, 30, lambda: rng.expovariate(1 / 10.0), 5.0, 60.0, seed=3)
        return [q.ttft_s for q in level.requests]

    assert run() == run() and len(run()) > 100


def test_users_arrive_spread_out_where_a_closed_loop_sends_waves() -> None:
    """A 4-slot engine of 10 ms steps: 8 closed-loop streams split into two waves of 4 that
    each wait for the other's whole request (0.65 s), while 8 users who think between
    requests (about 2 in flight) almost never find the slots full."""
    params = ModelParams(step_base_ms=10.0, idle_window_ms=0.0, max_num_seqs=4)
    waves = closed_loop_requests(params, 8, rounds=5, output_tokens=64)
    queued = sum(q.ttft_s > 0.3 for q in waves) / len(waves)
    rng = random.Random(2)
    users = users_level(params, 8, lambda: rng.expovariate(1 / 2.0), 5.0, 120.0,
                        output_tokens=64).requests  # fmt: skip
    assert queued >= 0.8
    assert sum(q.ttft_s > 0.3 for q in users) / len(users) < 0.1


@pytest.mark.parametrize("args", [(0, 1.0, 10.0), (5, -1.0, 10.0), (5, 1.0, 0.0)])
def test_impossible_arguments_raise(args: tuple[int, float, float]) -> None:
    n, warm, window = args
    with pytest.raises(ValueError):
        users_level(ModelParams(step_base_ms=10.0), n, lambda: 1.0, warm, window)
