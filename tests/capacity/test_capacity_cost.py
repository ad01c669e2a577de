"""`servecap capacity --gpus --gpu-hour-cost`: the answer's cost, from its probe run, checked
by hand (the known run of tests/data/cost-known-run.csv stands for the probes)."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from servecap.api.capacity.cost import price_answer
from servecap.cli.main import app
from servecap.core.config import SLO
from servecap.core.cost import CostFields
from servecap.storage.capacity_answer import CapacityAnswer
from servecap.storage.import_summary import import_summary

KNOWN = Path(__file__).parents[1] / "data" / "cost-known-run.csv"


def _answer(probe_run: Path, scale: float) -> CapacityAnswer:
    return CapacityAnswer(
        deployment="priced", status="found", slo=SLO(), confidence=0.95, c_max=4,
        first_miss=8, binding_slo="TTFT", latency_mean_s=3.2, time_scale=scale,
        predicted_users=60, requests=100, elapsed_s=10.0, probes=[],
        probe_run=str(probe_run),
    )


@pytest.mark.parametrize("scale", [1.0, 2.0])
def test_the_answer_is_priced_by_hand(tmp_path: Path, scale: float) -> None:
    (probe_run,) = import_summary(KNOWN, tmp_path)
    priced = price_answer(_answer(probe_run, scale), CostFields(gpus=2, gpu_hour_cost=2.5))
    assert priced.cost is not None
    at = priced.cost.point("C_max")
    assert at is not None and at.users == 60 and at.users_per_gpu == 30
    assert at.cost_per_user_hour == pytest.approx(5 / 60)
    # a simulator S times faster than real time served S times the real tokens per second
    assert at.cost_per_m_output_tokens == pytest.approx(5 / (160 / scale * 3600) * 1e6)
    assert price_answer(_answer(probe_run, scale), None).cost is None
    assert CapacityAnswer.model_validate_json(priced.model_dump_json()) == priced


@pytest.mark.parametrize(("args", "flag"), [(["--gpus", "-2"], "--gpus"),
                                            (["--gpu-hour-cost", "-1"], "--gpu-hour-cost")])
def test_bad_cost_is_exit_2_before_any_load(tmp_path: Path, args: list[str], flag: str) -> None:
    result = CliRunner().invoke(app, ["capacity", "--base-url", "http://127.0.0.1:9/v1",
                                      "--out", str(tmp_path / "out"), *args])
    assert result.exit_code == 2 and flag in result.output
    assert not (tmp_path / "out").exists()


def test_a_power_url_that_is_not_one_is_exit_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["capacity", "--base-url", "http://127.0.0.1:9/v1",
                                      "--out", str(tmp_path / "out"),
                                      "--power-metrics", "dcgm:9400"])
    assert result.exit_code == 2 and "--power-metrics" in result.output
    assert not (tmp_path / "out").exists()
