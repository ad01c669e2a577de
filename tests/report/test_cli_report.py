"""`servecap report` as a typer command (registered by the CLI's main app)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from servecap.cli.report_cmd import report


def _app() -> typer.Typer:
    app = typer.Typer()
    app.command("report")(report)

    @app.command("noop")
    def noop() -> None:  # a second command keeps typer in multi-command mode
        pass

    return app


@pytest.mark.slow
def test_report_command_writes_the_report(seed_run_dirs: list[Path], tmp_path: Path) -> None:
    out = tmp_path / "R"
    args = ["report", *map(str, seed_run_dirs), "--out", str(out), "--title", "Seed",
            "--pair", "vllm-spec:vllm-direct", "--ttft-slo-ms", "800", "--stat", "mean"]
    result = CliRunner().invoke(_app(), args)
    assert result.exit_code == 0, result.output
    assert (out / "report.html").is_file() and (out / "results.zip").is_file()
    assert "sglang-spec / sglang-direct" not in (out / "report.md").read_text().replace("\\", "")


def test_bad_input_exits_2(seed_run_dirs: list[Path], tmp_path: Path) -> None:
    runner = CliRunner()
    bad_pair = runner.invoke(_app(), ["report", str(seed_run_dirs[0]), "--out", str(tmp_path),
                                      "--pair", "nonsense"])
    assert bad_pair.exit_code == 2 and "--pair" in bad_pair.output
    empty = tmp_path / "empty"
    empty.mkdir()
    no_runs = runner.invoke(_app(), ["report", str(empty), "--out", str(tmp_path / "o")])
    assert no_runs.exit_code == 2 and "no runs" in no_runs.output
    bad_stat = runner.invoke(_app(), ["report", str(seed_run_dirs[0]), "--out", str(tmp_path),
                                      "--stat", "p50"])
    assert bad_stat.exit_code == 2 and "--stat" in bad_stat.output
