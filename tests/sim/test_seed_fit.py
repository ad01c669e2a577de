"""The seed profiles keep the seed report's findings (pure sweep): speculation's speed-up
at one user, where it stops paying, vllm-spec's fall and sglang-spec's TTFT jump at c=64."""

from __future__ import annotations

import pytest

from servecap.sim.model.sweep import closed_loop_sweep
from servecap.sim.profiles import load_profile

CONFIGS = ("vllm-direct", "vllm-spec", "sglang-direct", "sglang-spec")


@pytest.fixture(scope="module")
def sweeps() -> dict[str, list[dict[str, float]]]:
    return {name: closed_loop_sweep(load_profile(name).params) for name in CONFIGS}


def _by_c(rows: list[dict[str, float]], key: str) -> dict[int, float]:
    return {int(r["concurrency"]): r[key] for r in rows}


@pytest.mark.parametrize(("direct", "spec", "speedup"), [
    ("vllm-direct", "vllm-spec", 1.9), ("sglang-direct", "sglang-spec", 1.6),
])  # fmt: skip
@pytest.mark.slow
def test_spec_speedup_at_one_user(
    direct: str, spec: str, speedup: float, sweeps: dict[str, list[dict[str, float]]]
) -> None:
    ratio = _by_c(sweeps[spec], "tps_mean")[1] / _by_c(sweeps[direct], "tps_mean")[1]
    assert ratio == pytest.approx(speedup, rel=0.2)


@pytest.mark.parametrize(("direct", "spec", "near"), [
    ("vllm-direct", "vllm-spec", 16), ("sglang-direct", "sglang-spec", 4),
])  # fmt: skip
def test_break_even_level(
    direct: str, spec: str, near: int, sweeps: dict[str, list[dict[str, float]]]
) -> None:
    d, s = _by_c(sweeps[direct], "tps_mean"), _by_c(sweeps[spec], "tps_mean")
    first_loss = min(c for c in d if s[c] <= d[c])
    assert near / 2 <= first_loss <= near * 2, f"spec stops winning at c={first_loss}"


def test_vllm_spec_aggregate_output_falls_at_64(sweeps: dict[str, list[dict[str, float]]]) -> None:
    tps = _by_c(sweeps["vllm-spec"], "tps_mean")
    assert tps[64] * 64 < tps[32] * 32


def test_sglang_spec_ttft_jumps_at_64(sweeps: dict[str, list[dict[str, float]]]) -> None:
    ttft = _by_c(sweeps["sglang-spec"], "ttft_mean_ms")
    assert ttft[64] > 3 * ttft[32]
    assert all(ttft[c] < 1500 for c in (1, 2, 4, 8, 16, 32))
