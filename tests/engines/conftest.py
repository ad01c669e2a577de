"""Engine fixtures: build or reuse llama-server, make the tiny model, run each engine.

Engine tests run with SERVECAP_ENGINE_TESTS=1 (CI); otherwise they are skipped, so that the
parallel command's second part (`pytest -m alone`, docs/development.md) never starts a
multi-minute build on a machine that did not ask for one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.engines import procs
from tests.engines.copymodel import ensure_copy_model
from tests.engines.tinymodel import TinyModel, ensure_model


def _engines_enabled() -> bool:
    return os.environ.get("SERVECAP_ENGINE_TESTS") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _engines_enabled():
        return
    skip = pytest.mark.skip(reason="engine tests: run with SERVECAP_ENGINE_TESTS=1")
    for item in items:
        if "engine" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def tiny_model() -> TinyModel:
    return ensure_model()


@pytest.fixture(scope="session")
def llama_server_bin() -> Path:
    binary = procs.llama_server_binary(build=True)
    assert binary is not None and binary.is_file(), "llama-server binary missing"
    return binary


@pytest.fixture(scope="module")
def llama_engine(
    llama_server_bin: Path, tiny_model: TinyModel, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[procs.Engine]:
    engine = procs.llama_server(llama_server_bin, tiny_model.gguf, tmp_path_factory.mktemp("ll"))
    engine.start(health_timeout_s=60)
    try:
        yield engine
    finally:
        engine.stop()


@pytest.fixture(scope="module")
def transformers_engine(
    tiny_model: TinyModel, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[procs.Engine]:
    engine = procs.transformers_serve(tiny_model.hf_dir, tmp_path_factory.mktemp("tf"))
    engine.start(health_timeout_s=180)
    try:
        yield engine
    finally:
        engine.stop()


@dataclass(frozen=True)
class VllmPair:
    """Two live vLLM servers of the copying model: plain, and with n-gram speculation."""

    plain: procs.Engine
    spec: procs.Engine


@pytest.fixture(scope="module")
def vllm_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmPair]:
    """Both servers, started at once (each takes ~40 s to start) and stopped after the
    module; idle between tests, they share the machine's cores only while a test loads them."""
    python = procs.vllm_python()
    assert python is not None and python.is_file(), "vLLM virtualenv missing"
    model = ensure_copy_model()
    logs = tmp_path_factory.mktemp("vllm")
    pair = VllmPair(procs.vllm_server(python, model, logs, "vllm-plain"),
                    procs.vllm_server(python, model, logs, "vllm-spec", speculative=True))
    try:
        for engine in (pair.plain, pair.spec):
            engine.launch()
        for engine in (pair.plain, pair.spec):
            engine.wait_healthy(300)
        yield pair
    finally:
        for engine in (pair.plain, pair.spec):
            engine.stop()
