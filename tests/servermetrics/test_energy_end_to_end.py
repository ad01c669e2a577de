"""`--power-metrics`: each level's energy from a DCGM exporter, end to end on loopback.

The simulator's `/dcgm` (power from its own running batch) gives per level a J/token that
the test recomputes from the stored scrapes: from the energy counter's difference over the
level's token window, and from the power samples. A constant-power exporter that fails its
first scrapes leaves the first level uncovered (it says why instead of a number) and makes
the covered level's energy exact: 100 W times the window.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from servecap.api.run.run import Secrets, run_benchmark
from servecap.api.run.run_config import RunConfig
from servecap.core.config import ClientOptions
from servecap.sim import PowerModel, builtin_profile, start_server_in_thread
from servecap.storage.run_dir import iter_records
from servecap.storage.server_metrics_file import StoredScrape, read_scrapes
from tests.servers.app_thread import AppThread

pytestmark = pytest.mark.slow  # each module's fixture runs a whole run

ENERGY = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION_total"
POWER = "DCGM_FI_DEV_POWER_USAGE"


def _run(base_url: str, power: str, out: Path, levels: list[int], rounds: int) -> Path:
    config = RunConfig(
        concurrency=levels, rounds=rounds, input_tokens=16, output_tokens=64, warmup=0,
        out_dir=str(out), client=ClientOptions(base_url=base_url), server_metrics="off",
        metrics_hz=10, power_metrics=power,
    )
    return run_benchmark(config, Secrets()).run_dir


def _summed(samples: dict[str, float], name: str) -> float:
    return sum(v for k, v in samples.items() if k.split("{", 1)[0] == name)


def _counter_at(points: list[tuple[int, float]], t: int) -> float:
    """The test's own linear interpolation of the counter (J) at `t`."""
    for (t0, e0), (t1, e1) in zip(points, points[1:], strict=False):
        if t0 <= t <= t1:
            return e0 + (e1 - e0) * (t - t0) / (t1 - t0)
    raise AssertionError("t outside the readings")


def _levels(run_dir: Path) -> list[dict[str, Any]]:
    return json.loads((run_dir / "summary.json").read_text())


def _tokens(run_dir: Path, concurrency: int) -> int:
    return sum(r.completion_tokens or 0 for r in iter_records(run_dir / "requests.jsonl")
               if r.concurrency == concurrency and not r.warmup)


@pytest.fixture(scope="module")
def sim_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    handle = start_server_in_thread(builtin_profile("deterministic"), time_scale=2.0,
                                    power=PowerModel(idle_w=60, per_request_w=8, gpus=2))
    try:
        dcgm = handle.base_url.removesuffix("/v1") + "/dcgm"
        return _run(handle.base_url, dcgm, tmp_path_factory.mktemp("power"), [1, 4], 4)
    finally:
        handle.stop()


def test_j_per_token_is_the_counter_integral_over_the_token_window(sim_run: Path) -> None:
    scrapes = [s for s in read_scrapes(sim_run / "power_metrics.jsonl") if s.error is None]
    points = [(s.t_ns, _summed(s.samples, ENERGY) / 1000) for s in scrapes]  # mJ -> J
    for level in _levels(sim_run):
        energy = level["energy"]
        assert "note" not in energy, energy
        assert energy["gpus"] == 2
        t0, t1 = energy["from_ns"], energy["to_ns"]
        joules = _counter_at(points, t1) - _counter_at(points, t0)
        tokens = _tokens(sim_run, level["concurrency"])
        assert energy["output_tokens"] == tokens
        assert energy["energy_j"] == pytest.approx(joules, rel=1e-9)
        assert energy["j_per_output_token"] == pytest.approx(joules / tokens, rel=1e-9)
        assert energy["power_mean_w"] == pytest.approx(joules / ((t1 - t0) / 1e9), rel=1e-9)


def _bracket_s(scrapes: list[StoredScrape], t0: int, t1: int) -> float:
    """Seconds outside [t0, t1] that the readings around its edges may span: the last reading
    at or before t0 and the first at or after t1, each stamped at its round trip's midpoint
    (`ms`), so the server read its counter up to half that round trip away."""
    before = [s for s in scrapes if s.t_ns <= t0][-1]
    after = next(s for s in scrapes if s.t_ns >= t1)
    return ((t0 - before.t_ns) + (after.t_ns - t1)) / 1e9 + (before.ms + after.ms) / 2000


def _stamp_error_s(scrapes: list[StoredScrape], t: int) -> float:
    """How far the counter interpolated at `t` may be off in time: each reading is stamped at
    its round trip's midpoint, so the exporter read its counter up to half the round trip
    (`ms`) away, and the interpolation between the two readings around `t` carries at most
    the larger of the two."""
    before = [s for s in scrapes if s.t_ns <= t][-1]
    after = next(s for s in scrapes if s.t_ns >= t)
    return max(before.ms, after.ms) / 2000


def test_the_power_samples_integrate_to_the_same_energy(sim_run: Path) -> None:
    """The trapezoid of the W samples over the window, against the counter: the sim's power
    steps between samples, so they agree to within a tenth, not exactly."""
    scrapes = [s for s in read_scrapes(sim_run / "power_metrics.jsonl") if s.error is None]
    watts = [(s.t_ns, _summed(s.samples, POWER)) for s in scrapes]
    peak_w = 60 + 8 * max(level["concurrency"] for level in _levels(sim_run))
    for level in _levels(sim_run):
        energy = level["energy"]
        t0, t1 = energy["from_ns"], energy["to_ns"]
        inside = [(t, w) for t, w in watts if t0 <= t <= t1]
        assert len(inside) >= 5, "too few samples in the window to integrate"
        area = sum((b[0] - a[0]) / 1e9 * (a[1] + b[1]) / 2
                   for a, b in zip(inside, inside[1:], strict=False))
        covered = (inside[-1][0] - inside[0][0]) / 1e9
        assert area / covered == pytest.approx(energy["power_mean_w"], rel=0.1)
        # The batch's power: idle 60 W plus 8 W a running request, at most c of them. The
        # window's edges fall between readings and the counter only rises, so its
        # interpolated energy is at most the rise over the readings bracketing the window:
        # the window at the level's power plus the bracket's overhang at the run's peak.
        c = level["concurrency"]
        window_s = (t1 - t0) / 1e9
        ceiling_j = (60 + 8 * c) * window_s + peak_w * _bracket_s(scrapes, t0, t1)
        assert 60 < energy["power_mean_w"] <= ceiling_j / window_s


class FlakyExporter:
    """100 W on one GPU since it started; its first `fail` scrapes answer 503."""

    def __init__(self, fail: int) -> None:
        self.left, self.t0 = fail, time.monotonic()

    async def handle(self, request: web.Request) -> web.Response:
        if self.left > 0:
            self.left -= 1
            return web.Response(status=503, text="warming up")
        joules = 100.0 * (time.monotonic() - self.t0)
        body = (f'DCGM_FI_DEV_POWER_USAGE{{gpu="0"}} 100.0\n'
                f'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{{gpu="0"}} {joules * 1000!r}\n')
        return web.Response(text=body, content_type="text/plain")


def test_an_uncovered_level_says_why_and_a_covered_one_is_exact(tmp_path: Path) -> None:
    exporter = FlakyExporter(fail=2)  # the run's first scrape and level 1's opening one
    app = web.Application()
    app.router.add_get("/metrics", exporter.handle)
    sim = start_server_in_thread(builtin_profile("deterministic"), time_scale=2.0)
    try:
        with AppThread(app) as dcgm:
            url = dcgm.base_url.removesuffix("/v1") + "/metrics"
            run_dir = _run(sim.base_url, url, tmp_path, [1, 2], 4)
    finally:
        sim.stop()
    info = json.loads((run_dir / "run.json").read_text())
    assert info["status"] == "complete"  # a failing exporter never fails the run
    assert info["power_metrics"]["errors"] == {"http_503": 2}
    first, second = _levels(run_dir)
    assert "energy_j" not in first["energy"]
    note = first["energy"]["note"]
    assert note.startswith(("scrape started", "no energy reading")), note
    assert "http_503" in note
    assert any(w.startswith("energy not reported") for w in first["warnings"])
    energy = second["energy"]
    t0, t1 = energy["from_ns"], energy["to_ns"]
    window = (t1 - t0) / 1e9
    # The exporter's counter is linear in time: 100 W x the window, off only by where in each
    # reading's round trip the exporter read it.
    scrapes = [s for s in read_scrapes(run_dir / "power_metrics.jsonl") if s.error is None]
    off_j = 100.0 * (_stamp_error_s(scrapes, t0) + _stamp_error_s(scrapes, t1)) + 1e-6
    assert energy["energy_j"] == pytest.approx(100.0 * window, abs=off_j)
    assert energy["j_per_output_token"] == pytest.approx(
        100.0 * window / _tokens(run_dir, 2), abs=off_j / _tokens(run_dir, 2))


def test_plan_and_the_report_carry_the_energy(sim_run: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from servecap.cli.main import app

    runner = CliRunner()
    levels = {lv["concurrency"]: lv["energy"] for lv in _levels(sim_run)}
    plan = runner.invoke(app, ["plan", str(sim_run), "--format", "json"])
    assert plan.exit_code == 0, plan.output
    (run,) = json.loads(plan.output)["runs"]
    assert [lv["energy"] for lv in run["levels"]] == [levels[1], levels[4]]
    top = run["energy"]["C_max"]
    assert top["level"] == f"c={run['c_max']}"
    assert top["j_per_output_token"] == levels[run["c_max"]]["j_per_output_token"]
    assert "peak throughput" in run["energy"]
    table = runner.invoke(app, ["plan", str(sim_run)])
    assert "Energy (over each level's token window)" in table.output
    report = runner.invoke(app, ["report", str(sim_run), "--out", str(tmp_path)])
    assert report.exit_code == 0, report.output
    md = (tmp_path / "report.md").read_text().replace("\\", "")
    assert "Energy per level (C_max on P90" in md
    assert f"{levels[4]['j_per_output_token']:.4f}" in md


def test_results_page_shows_the_energy(sim_run: Path) -> None:
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    from tests.ui.conftest import APP_FILE

    at = AppTest.from_file(str(APP_FILE), default_timeout=60)
    at.session_state["results_dir"] = str(sim_run.parent)
    at = at.run()
    at = at.sidebar.radio(key="page").set_value("Results").run()
    assert not at.exception
    frame = next(d.value for d in at.dataframe if "J / output token" in d.value.columns)
    expected = [f"{lv['energy']['j_per_output_token']:.4f}" for lv in _levels(sim_run)]
    assert list(frame["J / output token"]) == expected
