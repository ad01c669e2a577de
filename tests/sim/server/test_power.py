"""The simulator's DCGM-shaped power series: exact integration, and `/dcgm` on loopback."""

from __future__ import annotations

import urllib.request

import pytest

from servecap.sim import PowerModel, builtin_profile, start_server_in_thread
from servecap.sim.server.power import PowerMeter, render_dcgm


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_energy_is_the_exact_integral_of_the_batch_power() -> None:
    clock = Clock()
    meter = PowerMeter(PowerModel(idle_w=50, per_request_w=10, gpus=2), clock)
    clock.t += 2.0  # idle: 2 s x 50 W
    meter.update(3)
    clock.t += 1.5  # 3 running: 1.5 s x 80 W
    meter.update(1)
    clock.t += 0.5  # 1 running: 0.5 s x 60 W
    watts, joules = meter.read()
    assert watts == 60
    assert joules == pytest.approx(2 * 50 + 1.5 * 80 + 0.5 * 60)
    text = render_dcgm(meter)
    # each of 2 GPUs draws half, and its counter (mJ) holds half the joules
    assert 'DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-sim-1"} 30.0' in text
    assert f'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{gpu="0",UUID="GPU-sim-0"}} {125000.0!r}' in text


def test_bad_power_model_is_refused() -> None:
    with pytest.raises(ValueError, match="power"):
        PowerModel(idle_w=-1)


def test_dcgm_path_on_the_simulator_server() -> None:
    handle = start_server_in_thread(builtin_profile("deterministic"), time_scale=10.0,
                                    power=PowerModel(idle_w=70, per_request_w=5))
    try:
        url = handle.base_url.removesuffix("/v1") + "/dcgm"
        with urllib.request.urlopen(url, timeout=10) as response:
            first = response.read().decode()
        with urllib.request.urlopen(url, timeout=10) as response:
            second = response.read().decode()
    finally:
        handle.stop()
    assert 'DCGM_FI_DEV_POWER_USAGE{gpu="0",UUID="GPU-sim-0"} 70.0' in first

    def energy(text: str) -> float:
        line = next(x for x in text.splitlines() if x.startswith("DCGM_FI_DEV_TOTAL"))
        return float(line.rsplit(" ", 1)[1])

    assert energy(second) > energy(first) > 0  # idle watts accumulate: a counter
