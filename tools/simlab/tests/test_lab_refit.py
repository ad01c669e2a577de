"""The seed lab's refit command: bad input fails at once, its outputs and its header."""

from __future__ import annotations

from pathlib import Path

import pytest
from refit import main as calibrate_main
from tests.seed_data import SEED_CSV


@pytest.mark.parametrize(("args", "needle"), [
    (["--seed-csv", "{tmp}/none.csv", "--out-dir", "{tmp}/p", "--holdout-dir", "{tmp}/h"],
     "none.csv: no such file"),
    (["--seed-csv", "{seed}", "--out-dir", "{tmp}/a-file/p", "--holdout-dir", "{tmp}/h"],
     "cannot write profiles to"),
    (["--seed-csv", "{seed}", "--out-dir", "{tmp}/p", "--only", "vllm-dirct",
      "--holdout-dir", "{tmp}/h"],
     "--only vllm-dirct: not a seed deployment"),
    (["--seed-csv", "{seed}", "--out-dir", "{tmp}/p", "--slo-margin", "5",
      "--holdout-dir", "{tmp}/h"],
     "--slo-margin 5.0: not in [0, 1)"),
])  # fmt: skip
def test_seed_refit_refuses_bad_input_before_fitting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    """The seed refit runs for many minutes: bad input must fail at once, in one line (it
    used to fit for eleven minutes and then die on a missing --out-dir)."""
    (tmp_path / "a-file").write_text("")
    argv = [a.format(tmp=tmp_path, seed=SEED_CSV) for a in args]
    with pytest.raises(SystemExit) as exit_info:
        calibrate_main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "p").exists()


def test_seed_refit_makes_its_output_folders(tmp_path: Path) -> None:
    out = tmp_path / "new" / "profiles"
    argv = ["--seed-csv", str(SEED_CSV), "--out-dir", str(out), "--only", "sglang-direct",
            "--evals", "1", "--rounds", "1",
            "--holdout-dir", str(tmp_path / "new" / "holdout_fits")]  # fmt: skip
    assert calibrate_main(argv) == 0
    assert (out / "sglang-direct.toml").is_file()
    assert (tmp_path / "new" / "holdout_fits" / "sglang-direct.toml").is_file()
    assert "--slo-margin" not in (out / "sglang-direct.toml").read_text()  # the default


def test_the_seed_refit_s_margin_is_in_its_header(tmp_path: Path) -> None:
    argv = ["--seed-csv", str(SEED_CSV), "--out-dir", str(tmp_path), "--only", "sglang-direct",
            "--evals", "1", "--rounds", "1", "--slo-margin", "0.025",
            "--holdout-dir", str(tmp_path / "held")]  # fmt: skip
    assert calibrate_main(argv) == 0
    header = (tmp_path / "sglang-direct.toml").read_text().splitlines()[1]
    assert header.endswith("--only sglang-direct --evals 1 --rounds 1 --slo-margin 0.025")
