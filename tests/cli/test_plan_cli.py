"""The issue's 'done when': import the seed's Appendix A, then plan it from the command line."""

import json

import pytest
from typer.testing import CliRunner

from servecap.cli.main import app
from tests.seed_data import SEED_CSV

ORDER = ["vllm-direct", "vllm-spec", "sglang-direct", "sglang-spec"]
runner = CliRunner()


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("x")
    result = runner.invoke(app, ["import-summary", str(SEED_CSV), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert len(result.output.split()) == 4
    return out


@pytest.mark.parametrize(
    ("stat", "c_max", "users"),
    [("p90", [32, 32, 16, 2], [427, 266, 261, 59]),
     ("mean", [64, 32, 64, 32], [682, 266, 717, 187])],
)
def test_plan_json(imported, stat, c_max, users):
    result = runner.invoke(app, ["plan", str(imported), "--stat", stat, "--format", "json"])
    assert result.exit_code == 0, result.output
    runs = {run["name"]: run for run in json.loads(result.output)["runs"]}
    assert [runs[n]["c_max"] for n in ORDER] == c_max
    assert [runs[n]["users"] for n in ORDER] == users


def test_plan_table_and_show(imported):
    result = runner.invoke(app, ["plan", str(imported)])
    assert result.exit_code == 0 and "C_max 32, users 427" in result.output
    one = sorted(imported.iterdir())[0]
    shown = runner.invoke(app, ["show", str(one)])
    assert shown.exit_code == 0 and "imported" in shown.output


def test_plan_rejects_bad_statistic(imported):
    result = runner.invoke(app, ["plan", str(imported), "--stat", "p75"])
    assert result.exit_code == 2
