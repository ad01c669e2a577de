"""The engine proof's drift rule on made-up cells: a group's floor is the furthest its
bracketing c=1 probes strayed from the calibration, the repeat's other levels aside."""

from __future__ import annotations

from servecap.sim import load_profile
from tests.engines import sim_proof
from tests.engines.sim_proof import Cell


def _proof() -> sim_proof.Proof:
    proof = sim_proof.Proof(load_profile("vllm-direct"))
    probe_1, probe_2 = sim_proof.PROBES
    proof.cells = [
        Cell(probe_1, 1, "itl_mean_ms", 3.0, 2.0),  # 50% off
        Cell(probe_1, 1, "ttft_mean_ms", 100.0, 100.0),
        Cell(probe_2, 1, "itl_mean_ms", 2.2, 2.0),  # 10% off
        Cell(sim_proof.REPEAT, 1, "itl_mean_ms", 2.0, 2.0),
        Cell(sim_proof.REPEAT, 8, "itl_mean_ms", 20.0, 10.0),  # c=8: no probe
    ]
    proof.brackets = {"128/128 other levels": (probe_1,),
                      sim_proof.USERS_GROUP: (probe_2, sim_proof.REPEAT)}  # fmt: skip
    return proof


def test_a_group_s_drift_is_its_furthest_probe() -> None:
    proof = _proof()
    assert proof.drift("128/128 other levels") == 0.25  # the mean of 50% and 0%
    assert abs(proof.drift(sim_proof.USERS_GROUP) - 0.10) < 1e-12  # c=8 of the repeat aside


def test_a_group_without_probes_drifts_by_nothing() -> None:
    assert _proof().drift("512/32") == 0.0
