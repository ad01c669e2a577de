"""Cost at the SLO boundary, checked by hand on a known run (tests/data/cost-known-run.csv).

Under the default SLOs (P90 TTFT <= 1000 ms, P90 TPS >= 15, think 45 s) C_max is 4:
L_mean 3.2 s, so users = round(4 x (1 + 45 / 3.2)) = round(60.25) = 60, at 160 tok/s.
Peak throughput is c=8: 204.8 tok/s, users = 8 x (1 + 45 / 5) = 80.
2 GPUs at 2.5 USD/GPU-hour: H = 5 USD/hour.
"""

from pathlib import Path

import pytest

from servecap.api.stored.plan import plan_runs
from servecap.core.config import SLO
from servecap.core.cost import CostBasis, CostFields
from servecap.stats.cost import cheaper, cost_difference, cost_point, per_user_hour
from servecap.stats.difference import Bounds
from servecap.storage.import_summary import import_summary
from servecap.storage.runs import load_runs

KNOWN = Path(__file__).parents[1] / "data" / "cost-known-run.csv"
BASIS = CostBasis(gpus=2, gpu_hour_cost=2.5)


@pytest.fixture(scope="module")
def known_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    (run_dir,) = import_summary(KNOWN, tmp_path_factory.mktemp("cost"))
    return run_dir


def test_cost_at_c_max_and_peak_by_hand(known_run: Path) -> None:
    plan = plan_runs(load_runs([known_run]), SLO(), cost=CostFields(gpus=2, gpu_hour_cost=2.5))
    (run,) = plan.runs
    assert run.c_max == 4 and run.users == 60
    cost = run.cost
    assert cost is not None and cost.hourly == 5.0 and cost.currency == "USD"
    at_c_max, peak = cost.point("C_max"), cost.point("peak throughput")
    assert at_c_max is not None and peak is not None
    assert at_c_max.level == "c=4" and peak.level == "c=8"
    # 5 USD/h / (160 tok/s x 3600 s/h) x 1e6 tok
    assert at_c_max.cost_per_m_output_tokens == pytest.approx(5 / (160 * 3600) * 1e6)
    assert at_c_max.cost_per_m_output_tokens == pytest.approx(8.68056, abs=1e-5)
    assert at_c_max.users_per_gpu == 30
    assert at_c_max.cost_per_user_hour == pytest.approx(5 / 60)
    assert peak.cost_per_m_output_tokens == pytest.approx(6.78168, abs=1e-5)
    assert peak.users == 80 and peak.users_per_gpu == 40
    assert peak.cost_per_user_hour == pytest.approx(0.0625)
    # what the SLO costs: each token at the boundary costs more than at peak
    assert at_c_max.cost_per_m_output_tokens > peak.cost_per_m_output_tokens


def test_no_cost_without_gpus_and_price(known_run: Path) -> None:
    runs = load_runs([known_run])
    assert plan_runs(runs, SLO()).runs[0].cost is None
    assert plan_runs(runs, SLO(), cost=CostFields(gpus=2)).runs[0].cost is None
    dumped = plan_runs(runs, SLO()).model_dump(mode="json")
    assert "cost" not in dumped["runs"][0]  # the stable JSON shape is unchanged


def test_flags_override_the_stored_cost_field_by_field() -> None:
    stored = {"gpus": 8, "gpu_hour_cost": 4.0, "currency": "EUR"}
    basis = CostFields(gpu_hour_cost=2.0).over(stored)
    assert basis == CostBasis(gpus=8, gpu_hour_cost=2.0, currency="EUR")
    assert CostFields().over({"gpus": -3, "gpu_hour_cost": 1}) is None  # never fails a load


def test_a_point_without_throughput_or_users_says_none() -> None:
    point = cost_point(BASIS, "C_max", None, None, None)
    assert point.cost_per_m_output_tokens is None and point.cost_per_user_hour is None


def test_cost_per_user_interval_and_the_cheaper_side() -> None:
    a = per_user_hour(BASIS, Bounds(60, 50, 70))  # 5 / users
    b = per_user_hour(CostBasis(gpus=1, gpu_hour_cost=2.5), Bounds(40, 30, 45))
    assert a is not None and b is not None
    assert (a.estimate, a.low, a.high) == pytest.approx((5 / 60, 5 / 70, 5 / 50))
    diff = cost_difference(a, b)
    assert diff.estimate == pytest.approx(2.5 / 40 - 5 / 60)
    assert (diff.low, diff.high) == pytest.approx((2.5 / 45 - 0.1, 2.5 / 30 - 5 / 70))
    assert cheaper(diff) == "undecided"  # the interval spans 0
    assert cheaper(Bounds(-1, -2, -0.5)) == "b" and cheaper(Bounds(1, 0.5, 2)) == "a"
    assert per_user_hour(BASIS, Bounds(0, 0, 0)) is None
