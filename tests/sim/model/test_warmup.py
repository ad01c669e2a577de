"""Warm-up and drift: a step's time is stretched by a factor of the server's uptime (counted
from its first request), off by default, and settable from a profile and from `servecap sim`'s
options."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import pytest
import typer

from servecap.sim import ModelParams, load_profile, start_server_process
from servecap.sim.cli import _with_overrides
from servecap.sim.model.fixed_engine import FixedEngine
from servecap.sim.model.step_engine import StepEngine
from servecap.sim.model.warmup import slowdown, slows
from servecap.sim.profiles import profile_from_dict

STEADY = ModelParams(idle_window_ms=0.0, step_base_ms=10.0)
#: the clocks' rounding: a response is never earlier than its schedule by more than this
CLOCK_S = 0.001


def test_off_by_default() -> None:
    assert not slows(ModelParams())
    assert slowdown(ModelParams(), 0.0) == slowdown(ModelParams(), 600.0) == 1.0


def test_the_warm_up_factor_decays_linearly_to_one() -> None:
    p = ModelParams(warmup_s=10.0, warmup_factor=3.0)
    assert [slowdown(p, t) for t in (0.0, 5.0, 10.0, 60.0)] == pytest.approx([3.0, 2.0, 1.0, 1.0])


def test_drift_grows_with_uptime() -> None:
    p = ModelParams(drift_per_min=0.1)
    assert [slowdown(p, t) for t in (0.0, 60.0, 300.0)] == pytest.approx([1.0, 1.1, 1.5])
    both = ModelParams(warmup_s=60.0, warmup_factor=2.0, drift_per_min=0.1)
    assert slowdown(both, 30.0) == pytest.approx(1.5 * 1.05)


def _step_times(params: ModelParams, start: float, steps: int = 5,
                opened: float | None = None) -> list[float]:
    """Durations of the first ``steps`` steps of one request that arrives at ``start``, on an
    engine whose first request (one token) arrived at ``opened`` (None: this one is first)."""
    eng = StepEngine(params)
    if opened is not None:
        eng.add(1, 1, 1, opened)
        while (t := eng.next_time()) is not None:
            eng.advance(t)
    eng.add(0, 1, steps, start)
    ends = []
    while (t := eng.next_time()) is not None and len(ends) < steps + 1:
        eng.advance(t)
        ends.append(t)
    return [b - a for a, b in zip(ends[1:], ends[2:], strict=False)]


def test_a_step_engine_is_slower_while_it_warms_up() -> None:
    warm = STEADY.model_copy(update={"warmup_s": 10.0, "warmup_factor": 3.0})
    early, late = _step_times(warm, 0.0), _step_times(warm, 20.0, opened=0.0)
    assert early[0] == pytest.approx(0.030, rel=0.01)  # 10 ms, three times over
    assert late == pytest.approx(_step_times(STEADY, 20.0))  # after warm-up: the steady steps


def test_the_warm_up_starts_with_the_first_request_not_the_process() -> None:
    """An engine idle for a minute is still cold: its first request gets the slow start."""
    warm = STEADY.model_copy(update={"warmup_s": 10.0, "warmup_factor": 3.0})
    assert _step_times(warm, 60.0)[0] == pytest.approx(0.030, rel=0.01)


def test_a_step_engine_drifts() -> None:
    drift = STEADY.model_copy(update={"drift_per_min": 0.5})
    # 2 min after the first request: 1 + 2 * 0.5
    assert _step_times(drift, 120.0, opened=0.0)[0] == pytest.approx(0.020, rel=0.01)


def test_the_fixed_schedule_warms_up_too() -> None:
    base = load_profile("deterministic").params
    warm = base.model_copy(update={"warmup_s": 10.0, "warmup_factor": 2.0})
    ttft = (base.fixed_ttft_ms or 0.0) / 1000.0
    for start, factor in ((0.0, 2.0), (5.0, 1.5), (30.0, 1.0)):
        eng = FixedEngine(warm)
        eng.add(1, 10, 1, 0.0)  # the first request starts the uptime
        eng.add(0, 10, 3, start)
        eng.advance(start)  # the first request's chunk, when it falls before `start`
        assert eng.next_time() == pytest.approx(start + ttft * factor)


def test_a_profile_sets_them_in_their_mechanism_s_table() -> None:
    profile = profile_from_dict({"name": "w", "params": {
        "warmup_drift": {"warmup_s": 30.0, "warmup_factor": 2.5, "drift_per_min": 0.02}}})
    p = profile.params
    assert (p.warmup_s, p.warmup_factor, p.drift_per_min) == (30.0, 2.5, 0.02)


def test_the_cli_options_set_them_and_refuse_bad_values() -> None:
    base = load_profile("vllm-direct")
    got = _with_overrides(base, None, None, {"warmup_s": 20.0, "warmup_factor": 4.0,
                                            "drift_per_min": None})  # fmt: skip
    assert (got.params.warmup_s, got.params.warmup_factor) == (20.0, 4.0)
    assert got.params.drift_per_min == base.params.drift_per_min
    for bad in ({"warmup_factor": 0.5}, {"drift_per_min": -1.0}, {"warmup_s": float("nan")}):
        with pytest.raises(typer.Exit):
            _with_overrides(base, None, None, bad)


@pytest.mark.slow
def test_a_served_profile_warms_up_over_http(tmp_path: Path) -> None:
    """`servecap sim` serving a profile with a warm-up: its first request, at the server's
    start, is at least the warm-up factor slower than the schedule (a floor: a busy machine
    only adds to it)."""
    path = tmp_path / "warm.toml"
    path.write_text('[params]\nfixed_ttft_ms = 50.0\nfixed_itl_ms = 10.0\n'
                    '[params.warmup_drift]\nwarmup_s = 600.0\nwarmup_factor = 3.0\n')
    with start_server_process(str(path)) as sim:
        body = json.dumps({"prompt": "x", "max_tokens": 1, "stream": False}).encode()
        request = urllib.request.Request(f"{sim.base_url}/completions", data=body,
                                         headers={"Content-Type": "application/json"})
        sent = time.monotonic()
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 200
        waited = time.monotonic() - sent
    # the factor falls from 3 by 2/600 a second: above 2.9 for the server's first 30 s
    assert waited >= 0.050 * 2.9 - CLOCK_S
