"""Every how-to guide's "try it" block runs, as written, against the built-in simulator.

A guide marks the block it promises works with `<!-- sim-check -->` on the line before a
bash fence. The test starts the simulator (deterministic profile, ten times real time) on a
free loopback port, points the guide's `127.0.0.1:8000` at it, and runs the block with bash
in an empty folder (with `tests/data` reachable as in a checkout), `servecap` being this
checkout's CLI. A line that starts a simulator itself (`servecap sim --profile ...`) is left
out: the test's own server stands in for it. A guide whose flags drift from the code fails
here with the command's own error message.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from servecap.sim import SimServerHandle, start_server_in_thread
from servecap.sim.profiles import builtin_profile

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
GUIDES = sorted((ROOT / "docs" / "how-to").glob("*.md"))
BLOCK = re.compile(r"<!-- sim-check -->\n```bash\n(.*?)```", re.S)
SERVES_ITSELF = re.compile(r"^servecap sim (--profile|serve)\b")


def checked_blocks(guide: Path) -> list[str]:
    return BLOCK.findall(guide.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def sim() -> Iterator[SimServerHandle]:
    handle = start_server_in_thread(builtin_profile("deterministic"), time_scale=10.0)
    yield handle
    handle.stop()


def script(block: str, base_url: str) -> str:
    # continuation lines joined first, so a dropped line is dropped whole
    lines = block.replace("\\\n", " ").splitlines()
    kept = [line for line in lines if not SERVES_ITSELF.match(line.strip())]
    return "\n".join(kept).replace("http://127.0.0.1:8000/v1", base_url)


def test_every_guide_has_a_checked_block() -> None:
    assert len(GUIDES) >= 12
    assert [g.name for g in GUIDES if not checked_blocks(g)] == []


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: p.stem)
def test_a_guides_commands_run_on_the_simulator(
    guide: Path, sim: SimServerHandle, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "servecap"
    wrapper.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -c '
        '"from servecap.cli.main import app; app()" "$@"\n'
    )
    wrapper.chmod(0o755)
    work = tmp_path / "work"
    (work / "tests").mkdir(parents=True)
    (work / "tests" / "data").symlink_to(ROOT / "tests" / "data")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    for block in checked_blocks(guide):
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script(block, sim.base_url)],
            cwd=work, env=env, capture_output=True, text=True, timeout=500,
        )
        shown = f"{guide.name}:\n{block}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        assert done.returncode == 0, shown
