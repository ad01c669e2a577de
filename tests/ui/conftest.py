"""Fixtures for the app's tests: a simulator on loopback, saved runs, an AppTest."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
pytest.importorskip("httptools")

from servecap.api.run.run import Secrets, run_benchmark
from servecap.api.run.run_config import RunConfig
from servecap.core.config import ClientOptions
from servecap.sim import SimServerHandle, builtin_profile, start_server_in_thread

APP_FILE = Path(__file__).resolve().parents[2] / "src" / "servecap" / "ui" / "app.py"


@pytest.fixture(scope="session")
def sim() -> Iterator[SimServerHandle]:
    """The deterministic profile, ten times faster than real time."""
    handle = start_server_in_thread(builtin_profile("deterministic"), time_scale=10.0)
    yield handle
    handle.stop()


def make_run(sim: SimServerHandle, results: Path, name: str, levels: list[int]) -> Path:
    config = RunConfig(
        name=name, concurrency=levels, rounds=2, input_tokens=16, output_tokens=8, warmup=0,
        out_dir=str(results), client=ClientOptions(base_url=sim.base_url),
    )
    return run_benchmark(config, Secrets()).run_dir


@pytest.fixture(scope="session")
def two_runs(sim: SimServerHandle, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results directory with two small saved runs (base and spec)."""
    results = tmp_path_factory.mktemp("two-runs")
    make_run(sim, results, "base", [1, 2])
    make_run(sim, results, "spec", [1, 2])
    return results


@pytest.fixture
def reset_app_state() -> Iterator[None]:
    """Each test gets a fresh process-wide run manager and simulator holder."""
    import streamlit as st

    st.cache_resource.clear()
    yield
    from servecap.ui.shared import run_manager, sim_holder

    run_manager().shutdown()
    sim_holder().stop()
    st.cache_resource.clear()


@pytest.fixture
def app_factory(reset_app_state: None) -> Callable[[Path], object]:
    from streamlit.testing.v1 import AppTest

    def make(results: Path) -> AppTest:
        at = AppTest.from_file(str(APP_FILE), default_timeout=60)
        at.session_state["results_dir"] = str(results)
        return at.run()

    return make


def wait_for(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.1)  # poll
