"""A plain pytest ends by naming the suites it skipped and the command that enables each."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_a_plain_run_names_skipped_suites_and_how_to_enable_them() -> None:
    env = {k: v for k, v in os.environ.items() if k != "SERVECAP_ENGINE_TESTS"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/engines/test_llama_server.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    section = out[out.index("skipped suites"):]
    assert "engine:" in section and "test(s) skipped" in section
    assert "SERVECAP_ENGINE_TESTS=1 python -m pytest -m engine" in section
    assert "bash .ci/run" in section
    # the last section before pytest's result line
    assert re.search(r"\d+ skipped in", out.rstrip().splitlines()[-1])


@pytest.mark.slow
def test_a_run_that_skips_nothing_says_nothing() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "tests/stats/test_capacity.py"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 0 and "skipped suites" not in result.stdout
