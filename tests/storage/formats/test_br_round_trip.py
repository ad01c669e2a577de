"""Round trip: a servecap run exported as Benchmark Report v0.2.1 partials and imported back
plans the same C_max and the same users (the issue's must-show), level by level.

The SLO's TTFT objective is put between two measured levels of the run itself, so the
boundary falls inside the grid (the simulator's streams are far faster than the TPS
objective, which every level passes on both sides). TTFT and latency travel as the same
numbers; TPS travels as its reciprocal (servecap's normalized
time per output token is 1/TPS per request), equal up to the linear interpolation between
the same two requests: hence the 1% stated below, not an equality."""

from __future__ import annotations

from pathlib import Path

import pytest

from servecap.api.stored.imports import import_files
from servecap.api.stored.plan import plan_runs
from servecap.core.config import SLO
from servecap.sim import SimServerHandle
from servecap.storage.runs import load_run
from tests.storage.formats.conftest import run_closed

TPS_INTERPOLATION = 0.01  # 1/interp(1/x) against interp(x) between the same two requests


@pytest.fixture(scope="module")
def sweep(sim: SimServerHandle, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_closed(sim, tmp_path_factory.mktemp("round-trip"), [1, 2, 4, 8, 16], rounds=6)


@pytest.mark.slow
def test_exported_and_imported_back_it_plans_the_same(sweep: Path, tmp_path: Path) -> None:
    original = load_run(sweep)
    ttft = [level.ttft_p90_ms for level in original.levels]
    assert all(t is not None for t in ttft) and ttft[2] < ttft[3]  # type: ignore[operator]
    slo = SLO(ttft_ms=(ttft[2] + ttft[3]) / 2, tps=1.0)  # type: ignore[operator]
    (imported_dir,) = import_files([sweep / "br"], tmp_path / "imported")
    imported = load_run(imported_dir)
    assert imported.info.imported["tool"] == "servecap"
    assert [lv.key for lv in imported.levels] == [lv.key for lv in original.levels]
    for ours, back in zip(original.levels, imported.levels, strict=True):
        assert back.ttft_p90_ms == pytest.approx(ours.ttft_p90_ms, rel=1e-9)
        assert back.latency_mean_s == pytest.approx(ours.latency_mean_s, rel=1e-9)
        assert back.tps_p90 == pytest.approx(ours.tps_p90, rel=TPS_INTERPOLATION)
    before, after = plan_runs([original], slo).runs[0], plan_runs([imported], slo).runs[0]
    assert before.c_max == 4  # the objective sits between c=4 and c=8
    assert (after.c_max, after.users) == (before.c_max, before.users)
    assert after.latency_mean_s == pytest.approx(before.latency_mean_s, rel=1e-9)
