"""`servecap sim calibrate` and `sim predict` work on a real engine's run (llama-server):
the profile records its fit and held-out error and the deployment's slots, and `predict`
answers the levels it never saw with finite numbers. How close those answers come is not
judged here: bench/engine_proof.py measures it and dates it in
docs/validation/engine-proof.md.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from servecap.sim import load_profile_file
from tests.engines import procs, sim_proof
from tests.engines.tinymodel import TinyModel

pytestmark = [pytest.mark.engine, pytest.mark.slow, pytest.mark.timeout(1200)]


@pytest.fixture(scope="module")
def calibrated(llama_server_bin: Path, tiny_model: TinyModel,
               tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:  # fmt: skip
    """(the calibration run, the profile fitted on it)."""
    tmp = tmp_path_factory.mktemp("cal")
    eng = sim_proof.engine(llama_server_bin, tiny_model.gguf, tmp)
    eng.start(health_timeout_s=60)
    try:
        run_dir = sim_proof.sweep(eng, tmp, "calibrate", sim_proof.CAL_LEVELS, 128, 128)
    finally:
        eng.stop()
    profile = tmp / "llama-tiny.toml"
    sim_proof.calibrate(run_dir, profile)
    return run_dir, profile


def test_the_profile_records_its_errors_and_the_deployment(calibrated: tuple[Path, Path]) -> None:
    _, path = calibrated
    profile = load_profile_file(path)
    cal = profile.calibration
    # at the tokens llama-server counted (its chat template: 134-139 for an asked 128)
    assert str(cal["holdout_split"]).startswith("fit on c=1,8; predicted c=4 (")
    assert f"max_num_seqs = {procs.SLOTS}" in str(cal["set_from_deployment"])
    assert "decode_batch_cap" in str(cal["fitted"])  # llama.cpp's base
    assert profile.params.max_num_seqs == procs.SLOTS
    for key in ("mape", "max_cell_error", "holdout_mape", "holdout_max_cell_error"):
        assert math.isfinite(float(cal[key])) and float(cal[key]) >= 0.0, key


def test_predict_answers_levels_it_never_saw(calibrated: tuple[Path, Path]) -> None:
    run_dir, path = calibrated
    levels = sim_proof.predicted(path, sim_proof.OTHER_LEVELS, run_dir)
    assert [int(row["concurrency"]) for row in levels] == list(sim_proof.OTHER_LEVELS)
    for row in levels:
        for metric in sim_proof.METRICS:
            assert math.isfinite(float(row[metric])) and float(row[metric]) > 0.0, (row, metric)
