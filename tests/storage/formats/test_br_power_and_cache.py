"""The BR partials carry what the production questions measured: the mean power over each
level's token window (`--power-metrics`, in Watts) and the prefix-cache hit rate (from
`/metrics`, else from the cached tokens in usage), and still validate against the schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from servecap.api.run.run import Secrets, run_benchmark
from servecap.api.run.run_config import RunConfig
from servecap.core.config import ClientOptions
from servecap.core.summary import LevelSummary
from servecap.sim import PowerModel, builtin_profile, start_server_in_thread
from servecap.storage.formats.br_out import observability
from servecap.storage.runs import load_run


@pytest.fixture(scope="module")
def power_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    handle = start_server_in_thread(builtin_profile("deterministic"), time_scale=2.0,
                                    power=PowerModel(idle_w=60, per_request_w=8, gpus=1))
    try:
        config = RunConfig(
            concurrency=[1, 4], rounds=4, input_tokens=16, output_tokens=64, warmup=0,
            out_dir=str(tmp_path_factory.mktemp("power")), metrics_hz=10,
            client=ClientOptions(base_url=handle.base_url), server_metrics="off",
            power_metrics=handle.base_url.removesuffix("/v1") + "/dcgm",
        )
        return run_benchmark(config, Secrets()).run_dir
    finally:
        handle.stop()


def _aggregate(doc: dict[str, Any]) -> dict[str, Any]:
    (component,) = doc["results"]["observability"]["components"]
    aggregate: dict[str, Any] = component["aggregate"]
    return aggregate


@pytest.mark.slow
def test_each_partial_carries_the_levels_mean_power(power_run: Path, br_validator: Any) -> None:
    run = load_run(power_run)
    docs = [json.loads(p.read_text()) for p in sorted((power_run / "br").glob("*.json"))]
    assert len(docs) == len(run.levels) == 2
    for summary, doc in zip(run.levels, docs, strict=True):
        br_validator.validate(doc)
        power = _aggregate(doc)["power_consumption"]
        assert power["units"] == "Watts"
        assert summary.energy is not None
        assert power["mean"] == pytest.approx(summary.energy["power_mean_w"])
        assert power["mean"] > 60  # above idle: the level's requests drew power


def test_a_level_the_scrape_did_not_cover_has_no_power_and_usage_gives_the_hit_rate() -> None:
    level = LevelSummary(concurrency=1, prefix_hit_rate_usage=0.6,
                         energy={"note": "power scrape started after the level's first token"})
    aggregate = observability(level)["components"][0]["aggregate"]  # type: ignore[index]
    assert aggregate["cache_hit_rate"] == {"units": "percent", "mean": 60.0, "max": None}
    assert aggregate["power_consumption"] is None  # stripped from the partial as a null
    from_metrics = LevelSummary(concurrency=1, prefix_hit_rate_usage=0.6,
                                server_prefix_hit_rate=0.5)
    shown = observability(from_metrics)["components"][0]["aggregate"]  # type: ignore[index]
    assert shown["cache_hit_rate"]["mean"] == 50.0  # the server's own counters first
