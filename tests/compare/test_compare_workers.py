"""A comparison's slots run through the run's own engine pieces, worker processes included:
`compare --workers 2` splits each target's level over two processes of its own, loses no
row, and says so in each target's run; `--lockstep` (a process per target already) with
`--workers` is refused before any load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servecap.cli.main import app

runner = CliRunner()
TARGETS = ["--target", "a=sim:deterministic*2", "--target", "b=sim:deterministic"]


@pytest.mark.slow
def test_each_target_splits_its_levels_over_its_own_workers(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, [
        "compare", *TARGETS, "--concurrency", "4", "--rounds", "3", "--repeats", "1",
        "--warmup", "0", "--input-tokens", "16", "--output-tokens", "8", "--workers", "2",
        "--out", str(out),
    ])
    assert result.exit_code == 0, result.output
    (comp,) = [p for p in out.iterdir() if (p / "comparison.json").is_file()]
    stored = json.loads((comp / "comparison.json").read_text())
    assert stored["status"] == "complete" and stored["headlines"]
    for target in stored["targets"]:
        run_dir = comp / target["run_dir"]
        rows = (run_dir / "requests.jsonl").read_text().splitlines()
        assert len(rows) == 12  # 4 streams x 3 rounds, across both processes
        (level,) = json.loads((run_dir / "summary.json").read_text())
        assert level["workers"] == 2 and level["n_ok"] == 12
        facts = json.loads((run_dir / "run.json").read_text())["workers"]
        assert facts, "the side's run.json names its worker processes"


def test_lockstep_with_workers_is_refused_before_any_load(tmp_path: Path) -> None:
    result = runner.invoke(app, ["compare", *TARGETS, "--lockstep", "--workers", "2",
                                 "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and "--lockstep or --workers" in result.output
    assert not (tmp_path / "out").exists()
