"""Every bench script still imports: a script that names a module the code has since moved
(bench/soak.py once imported `load.closed_loop` after the kinds split) fails here, not on
the day someone needs its figures. Importing runs no benchmark: each runs under `__main__`."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = sorted(BENCH.glob("*.py"))


def test_there_are_bench_scripts() -> None:
    assert len(SCRIPTS) >= 10


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_a_bench_script_imports(script: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = f"bench_{script.stem}"
    spec = importlib.util.spec_from_file_location(name, script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    assert callable(getattr(module, "main", None)), f"{script.name} has no main()"
