"""Shared by the export tests: the published BR v0.2.1 schema (tests/data/br_v0_2_1, with its
source and license), and real runs against the simulator on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from servecap.api.run.run import Secrets, run_benchmark
from servecap.api.run.run_config import RunConfig
from servecap.core.config import ClientOptions
from servecap.kinds.closed import ClosedLoad
from servecap.sim import SimServerHandle, builtin_profile, start_server_in_thread

BR_DATA = Path(__file__).parents[2] / "data" / "br_v0_2_1"


@pytest.fixture(scope="session")
def br_validator() -> jsonschema.protocols.Validator:
    schema = json.loads((BR_DATA / "br_v0_2_1_json_schema.json").read_text())
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    validator: jsonschema.protocols.Validator = cls(schema)
    return validator


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServerHandle]:
    """vllm-direct (it serves `usage` and `/metrics`), ten times faster than real time."""
    handle = start_server_in_thread(builtin_profile("vllm-direct"), time_scale=10.0)
    yield handle
    handle.stop()


def run_closed(sim: SimServerHandle, out: Path, levels: list[int], rounds: int = 4) -> Path:
    """A real closed-loop run against the simulator; its run directory."""
    config = RunConfig(
        name="brout", warmup=1, output_tokens=16, input_tokens=32, out_dir=str(out),
        client=ClientOptions(base_url=sim.base_url),
        load=ClosedLoad(concurrency=levels, rounds=rounds),
    )
    return run_benchmark(config, Secrets()).run_dir


@pytest.fixture(scope="module")
def closed_run(sim: SimServerHandle, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_closed(sim, tmp_path_factory.mktemp("closed"), [1, 4])


def nulls_or_empties(value: Any, where: str = "") -> list[str]:
    """Every place in `value` that holds a None or an empty object."""
    if value is None:
        return [where]
    if isinstance(value, dict):
        found = [where] if not value else []
        for key, item in value.items():
            found += nulls_or_empties(item, f"{where}.{key}")
        return found
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in nulls_or_empties(item, f"{where}[{i}]")]
    return []
