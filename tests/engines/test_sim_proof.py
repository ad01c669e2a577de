"""The simulator calibrated on llama-server predicts what it never saw (issue 20 item 4).

Calibrated on three levels of 128/128, the profile predicts three other levels (one beyond
the engine's 8 slots, where requests queue for a slot) and a 512/32 workload; each group's
mean error over TTFT, ITL, TPS and latency means is to stay within the profile's own fit
error plus EXTRAPOLATION plus the engine's repeat error (the calibration levels measured
again at the end), and the fit error within MAX_FIT_ERROR plus that repeat error. The
figures are printed (run with -s, or see bench/sim_holdout.py --engine).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.engines import sim_proof
from tests.engines.tinymodel import TinyModel

pytestmark = [pytest.mark.engine, pytest.mark.slow, pytest.mark.timeout(1800)]

# A held-out group's mean error may exceed the profile's error on the levels it was fitted
# to by at most EXTRAPOLATION, plus the engine's own repeat error. The fit error is the floor
# because the model cannot come closer to levels it never saw than to those it did: on this
# engine it is 12-18% (llama.cpp's CPU step cost is not monotone in the batch size, which no
# power law follows), above the 15% starting point before any level is held out.
EXTRAPOLATION = 0.05
# the floor itself is bounded, so a model that cannot represent the engine fails here; the
# engine's repeat error is added, as below: beside a CPU hog the calibration run's c=1 TTFT
# read 49 ms and its repeat 29 ms, and no fit comes closer to levels than they are to
# themselves (fit error 26.8%, repeat error 9.4%)
MAX_FIT_ERROR = 0.25


@pytest.fixture(scope="module")
def proof(llama_server_bin: Path, tiny_model: TinyModel,
          tmp_path_factory: pytest.TempPathFactory) -> sim_proof.Proof:  # fmt: skip
    return sim_proof.run_proof(llama_server_bin, tiny_model.gguf, tmp_path_factory.mktemp("sp"))


def test_profile_records_fit_and_held_out_error(proof: sim_proof.Proof) -> None:
    cal = proof.profile.calibration
    assert cal["holdout_split"] == "fit on c=1,8; predicted c=4"
    assert "max_num_seqs = 8" in str(cal["set_from_deployment"])
    assert proof.profile.params.max_num_seqs == 8
    assert {"mape", "holdout_mape", "fit_ttft_p90_ms", "holdout_ttft_mean_ms"} <= set(cal)
    bound = MAX_FIT_ERROR + proof.mean_error(sim_proof.REPEAT)
    assert float(cal["mape"]) <= bound, sim_proof.table(proof)


# The engine's own repeat error is added: on a shared 2-core machine the same levels measured
# a few minutes apart differ (c=1 ITL 6.4 ms in one run, 7.2 ms in the next), and a
# prediction from the first cannot be closer to the second than the engine is to itself.
@pytest.mark.parametrize("workload", ["128/128 other levels", "512/32"])
def test_prediction_beside_measurement(proof: sim_proof.Proof, workload: str) -> None:
    print("\n" + sim_proof.table(proof))
    cells = proof.group(workload)
    assert len(cells) >= 8
    assert all(math.isfinite(c.error) and c.error >= 0 for c in cells), sim_proof.table(proof)
    fit_error = float(proof.profile.calibration["mape"])
    bound = fit_error + EXTRAPOLATION + proof.mean_error(sim_proof.REPEAT)
    assert proof.mean_error(workload) <= bound, (
        f"{workload}: mean error {proof.mean_error(workload):.1%} over {bound:.1%} (fit error "
        f"{fit_error:.1%} + {EXTRAPOLATION:.0%} + engine repeat)\n"
        + sim_proof.table(proof)
    )
