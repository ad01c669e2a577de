"""The report says which runs are simulated, with the profile's held-out error."""

from __future__ import annotations

from servecap.report.simulated import simulated_label


def test_real_server_is_not_simulated() -> None:
    assert simulated_label({}) == "no: a real server"
    assert simulated_label({"version": {"server": "vllm"}}) == "no: a real server"


def test_simulated_run_carries_the_held_out_error() -> None:
    server = {"version": {"server": "servecap-sim", "profile": "vllm-direct",
                          "calibration": {"holdout_mape": 0.071, "holdout_max_cell_error": 0.24}}}
    assert simulated_label(server) == (
        "simulated (servecap sim, profile vllm-direct): held-out error 7.1%, worst cell 24.0%"
    )


def test_simulated_run_without_a_held_out_error_says_so() -> None:
    server = {"version": {"server": "servecap-sim", "profile": "deterministic", "calibration": {}}}
    assert "publishes no held-out error" in simulated_label(server)
