"""`servecap capacity` against llama-server (8 slots, the tiny GGUF): a verified answer
within a few minutes, every request answered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servecap.storage.capacity_answer import EXIT_CODES
from tests.engines.procs import Engine
from tests.engines.sweep import LLAMA_EXTRA_BODY, servecap

pytestmark = [pytest.mark.engine, pytest.mark.slow, pytest.mark.timeout(900)]


def test_capacity_reaches_a_verified_answer(llama_engine: Engine, tmp_path: Path) -> None:
    out = tmp_path / "capacity"
    done = servecap(
        "capacity", "--base-url", llama_engine.base_url, "--model", llama_engine.model,
        "--input-tokens", "64", "--output-tokens", "32",
        "--extra-body", json.dumps(LLAMA_EXTRA_BODY), "--ttft-slo-ms", "300",
        "--tps-slo", "5", "--max-time", "6m", "--users-duration", "20",
        "--out", str(out), timeout_s=800,
    )
    answer = json.loads((out / "capacity.json").read_text())
    # a busy machine may flag the client itself at the first miss: exit 5, the answer whole
    assert answer["status"] in ("found", "client_bound"), done.stdout + done.stderr[-3000:]
    assert done.returncode == EXIT_CODES[answer["status"]]
    assert answer["complete"]
    assert answer["first_miss"] == answer["c_max"] + 1
    assert answer["verified_users"], answer
    assert answer["diagnosis"] is None  # every request answered
    assert "users verified (predicted" in done.stdout.splitlines()[0]
