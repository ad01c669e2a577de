"""The app's server view of a scraped run: its timeline (client and server on one clock)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from servecap.api.run.run import Secrets, run_benchmark
from servecap.api.run.run_config import RunConfig
from servecap.core.config import ClientOptions
from servecap.sim import SimServerHandle

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def scraped(sim: SimServerHandle, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results directory with one run whose server was scraped 10 times a second."""
    results = tmp_path_factory.mktemp("scraped")
    config = RunConfig(
        name="scraped", concurrency=[1, 4], rounds=2, input_tokens=16, output_tokens=64,
        warmup=0, metrics_hz=10, out_dir=str(results), client=ClientOptions(base_url=sim.base_url),
    )  # fmt: skip
    run_dir = run_benchmark(config, Secrets()).run_dir
    assert (run_dir / "server_metrics.jsonl").is_file()
    return results


@pytest.mark.slow
def test_the_results_page_shows_the_scraped_run_s_timeline(
    app_factory: Any, scraped: Path
) -> None:
    at = app_factory(scraped)
    at = at.sidebar.radio(key="page").set_value("Results").run()
    assert not at.exception
    labels = [tab.label for tab in at.tabs]
    assert any(label.endswith(": timeline") for label in labels), " | ".join(labels)
