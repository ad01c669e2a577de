"""Cost flags from the command line: plan's table and JSON, the report's capacity section,
`run` storing them, and bad values refused before any load (exit 2, one message)."""

import json
from html import unescape
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servecap.cli.main import app
from servecap.storage.run_dir import load_run_info, write_run_info

KNOWN = Path(__file__).parents[1] / "data" / "cost-known-run.csv"
runner = CliRunner()


@pytest.fixture(scope="module")
def known(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("known")
    result = runner.invoke(app, ["import-summary", str(KNOWN), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return Path(result.output.split()[0])


def test_plan_json_carries_the_cost(known: Path) -> None:
    result = runner.invoke(app, ["plan", str(known), "--format", "json", "--gpus", "2",
                                 "--gpu-hour-cost", "2.5", "--currency", "EUR"])
    assert result.exit_code == 0, result.output
    cost = json.loads(result.output)["runs"][0]["cost"]
    at = {p["at"]: p for p in cost["points"]}
    assert cost["currency"] == "EUR" and cost["hourly"] == 5.0
    assert at["C_max"]["cost_per_user_hour"] == pytest.approx(5 / 60)
    assert at["peak throughput"]["cost_per_m_output_tokens"] == pytest.approx(
        5 / (204.8 * 3600) * 1e6)


def test_plan_table_shows_the_cost(known: Path) -> None:
    result = runner.invoke(app, ["plan", str(known), "--gpus", "2", "--gpu-hour-cost", "2.5"])
    assert result.exit_code == 0, result.output
    assert "2 GPU x 2.5 USD/GPU-hour = 5 USD/hour" in result.output
    assert "8.681 USD" in result.output and "0.08333 USD" in result.output


def test_stored_cost_is_used_and_overridden(known: Path, tmp_path: Path) -> None:
    info = load_run_info(known)
    write_run_info(known, info.model_copy(update={"cost": {"gpus": 4, "gpu_hour_cost": 1.0}}))
    try:
        stored = json.loads(runner.invoke(app, ["plan", str(known), "--format", "json"]).output)
        assert stored["runs"][0]["cost"]["hourly"] == 4.0
        over = runner.invoke(app, ["plan", str(known), "--format", "json", "--gpus", "1"])
        assert json.loads(over.output)["runs"][0]["cost"]["hourly"] == 1.0
    finally:
        write_run_info(known, info)


@pytest.mark.slow
def test_report_capacity_section_carries_the_cost(known: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(known), "--out", str(tmp_path), "--gpus", "2",
                                 "--gpu-hour-cost", "2.5"])
    assert result.exit_code == 0, result.output
    md = (tmp_path / "report.md").read_text().replace("\\", "")  # markdown's escapes
    html = unescape((tmp_path / "report.html").read_text())
    for page in (md, html):
        assert "Cost at the SLO boundary (P90; priced: 2 GPU x 2.5 USD/GPU-hour" in page
        assert "8.681 USD" in page and "6.782 USD" in page and "0.0625 USD" in page


@pytest.mark.parametrize(("args", "message"), [
    (["--gpus", "-1"], "--gpus"),
    (["--gpu-hour-cost", "-0.5"], "--gpu-hour-cost"),
    (["--gpus", "0"], "--gpus"),
    (["--currency", "<b>"], "--currency"),
])
@pytest.mark.parametrize("command", ["plan", "report"])
def test_bad_cost_is_exit_2(known: Path, tmp_path: Path, command: str, args: list[str],
                            message: str) -> None:
    extra = ["--out", str(tmp_path)] if command == "report" else []
    result = runner.invoke(app, [command, str(known), *extra, *args])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "report.html").exists()


def test_run_refuses_a_negative_price_before_any_load(tmp_path: Path) -> None:
    # port 9 (discard) on loopback: nothing is contacted, the flag is refused first
    result = runner.invoke(app, ["run", "--base-url", "http://127.0.0.1:9/v1", "--gpus", "1",
                                 "--gpu-hour-cost", "-2", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "--gpu-hour-cost" in result.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("url", ["not a url", "ftp://host/metrics", "http://"])
def test_run_refuses_a_power_url_that_is_not_one(tmp_path: Path, url: str) -> None:
    result = runner.invoke(app, ["run", "--base-url", "http://127.0.0.1:9/v1",
                                 "--power-metrics", url, "--out", str(tmp_path)])
    assert result.exit_code == 2 and "--power-metrics" in result.output
    assert list(tmp_path.iterdir()) == []
