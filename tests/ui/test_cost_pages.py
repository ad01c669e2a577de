"""GPUs and price on the Results and Compare pages (AppTest, saved runs and a stored
comparison of two simulators on loopback)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from servecap.api.stored.plan import plan_runs
from servecap.core.config import SLO
from servecap.core.cost import CostFields
from servecap.storage.runs import load_runs

pytestmark = pytest.mark.timeout(240)


def _cost_frame(at: Any) -> Any:
    return next(d.value for d in at.dataframe if "cost / user / hour" in d.value.columns)


@pytest.mark.slow
def test_results_page_prices_the_run(app_factory: Any, two_runs: Path) -> None:
    at = app_factory(two_runs)
    at = at.sidebar.radio(key="page").set_value("Results").run()
    assert not at.exception
    assert not any("cost / user / hour" in d.value.columns for d in at.dataframe)
    at.number_input(key="results-cost-gpus").set_value(2.0)
    at = at.number_input(key="results-cost-price").set_value(3.0).run()
    assert not at.exception
    frame = _cost_frame(at)
    assert list(frame["at"]) == ["C_max", "peak throughput"]
    # the page's figures are plan's on the same run (checked by hand in tests/stats)
    folder = at.selectbox(key="results_run").value
    (run,) = load_runs([two_runs / folder])
    cost = plan_runs([run], SLO(), cost=CostFields(gpus=2, gpu_hour_cost=3)).runs[0].cost
    assert cost is not None
    at_c_max = cost.point("C_max")
    assert at_c_max is not None and at_c_max.cost_per_user_hour is not None
    assert frame["cost / user / hour"][0] == f"{at_c_max.cost_per_user_hour:.4g} USD"
    assert any("2 GPU x 3 USD/GPU-hour = 6 USD/hour" in c.value.replace("\\", "")
               for c in at.caption)
    at = at.text_input(key="results-cost-currency").set_value("<b>").run()
    assert any(e.value.startswith("cost") for e in at.error)  # named, and no table
    assert not any("cost / user / hour" in d.value.columns for d in at.dataframe)


@pytest.fixture(scope="module")
def comparison(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from servecap.cli.main import app

    out = tmp_path_factory.mktemp("results")
    result = CliRunner().invoke(app, [
        "compare", "--target", "a=sim:deterministic*2", "--target", "b=sim:deterministic",
        "--repeats", "3", "--concurrency", "1,2", "--rounds", "3", "--output-tokens", "12",
        "--seed", "5", "--out", str(out), "--ttft-slo-ms", "5000", "--tps-slo", "1",
    ])
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.slow
def test_compare_page_says_which_is_cheaper_per_user(app_factory: Any, comparison: Path) -> None:
    at = app_factory(comparison)
    at = at.sidebar.radio(key="page").set_value("Compare").run()
    at.sidebar.text_input(key="slo_ttft").set_value("5000")
    at = at.sidebar.text_input(key="slo_tps").set_value("1").run()
    assert not at.exception
    shown = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "cost per served user-hour" not in shown  # no GPUs, no price: no cost
    at.number_input(key="compare-cost-gpus").set_value(1.0)
    at = at.number_input(key="compare-cost-price").set_value(2.0).run()
    shown = " ".join(m.value for m in at.markdown).replace("\\", "")
    (comp,) = [p for p in comparison.iterdir() if p.is_dir()]
    head = json.loads((comp / "comparison.json").read_text())["headlines"][0]
    assert f"b {2.0 / head['b']['users']:.4g} USD" in shown
    assert "b is cheaper than a" in shown
