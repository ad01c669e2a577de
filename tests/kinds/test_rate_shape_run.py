"""`--load shape=...`: a time-varying rate through `run` (one process and two), `plan` (per
time window) and `report` (rate and TTFT over time) on the simulator; bad shapes are one
message and exit 2 before any load."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from servecap.kinds.rate_shape import shape_offsets_ns
from servecap.sim import SimProcessHandle, start_server_process
from tests.faults.runs import invoke, invoke_report
from tests.faults.test_bad_input import assert_one_error
from tests.servers.fault_server import FaultServer, FaultServerThread

pytestmark = pytest.mark.timeout(180)
SHAPE = "steps:10,40:1s"  # 10 requests/s for a second, then 40: a step a window sees


def args(base_url: str, out: Path, *extra: str) -> list[str]:
    return ["run", "--base-url", base_url, "--warmup", "0", "--output-tokens", "4",
            "--input-tokens", "8", "--timeout", "5", "--out", str(out), *extra]


def test_bad_shapes_are_one_message_and_no_load(tmp_path: Path) -> None:
    gap = tmp_path / "rates.csv"
    gap.write_text("second,rate\n0,2\n1,3\n3,4\n")
    cases = [
        (["--load", "shape=ramp:1:0:10s"], "a rate must be > 0"),
        (["--load", "shape=ramp:1:x:10s"], "'x' is not a rate"),
        (["--load", "shape=wave:1:2"], "unknown shape 'wave'"),
        (["--load", f"shape={gap}"], "line 4: second 2 expected, found 3 (a gap)"),
        (["--load", "shape=ramp:1:2:10s", "--rate", "1"], "--load and --rate"),
        (["--load", "speed=2"], "invalid --load 'speed=2'"),
    ]
    server = FaultServer()
    with FaultServerThread(server) as thread:
        for extra, needle in cases:
            assert_one_error(invoke(args(thread.base_url, tmp_path / "out", *extra)), needle)
    assert server.completions == 0
    assert not list(tmp_path.glob("out/*/run.json"))


@pytest.fixture(scope="module")
def sim() -> Iterator[SimProcessHandle]:
    with start_server_process("vllm-direct", time_scale=10.0) as handle:
        yield handle


def _run_dir(out: Path) -> Path:
    return next(p for p in out.iterdir() if (p / "run.json").is_file())


def _offsets(run_dir: Path) -> list[int]:
    rows = [json.loads(x) for x in (run_dir / "requests.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r.get("level") == "shape=1"]
    start = min(r["scheduled_at"] - shape_offsets_ns(SHAPE, 5)[r["stream_index"]] for r in rows)
    return sorted(r["scheduled_at"] - start for r in rows)


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_step_shape_runs_plans_and_reports(
    sim: SimProcessHandle, tmp_path: Path, workers: str
) -> None:
    result = invoke(args(sim.base_url, tmp_path / "runs", "--load", f"shape={SHAPE}",
                         "--seed", "5", "--workers", workers))
    assert result.exit_code == 0, result.stderr
    run_dir = _run_dir(tmp_path / "runs")
    planned = shape_offsets_ns(SHAPE, 5)
    # records keep their scheduled time: the one drawn schedule, to the nanosecond
    assert _offsets(run_dir) == sorted(planned)
    (level,) = json.loads((run_dir / "summary.json").read_text())
    assert level["level"] == "shape=1" and level["n_requests"] == len(planned)
    windows = level["kind_block"]["windows"]
    assert sum(w["n"] for w in windows) == len(planned)
    assert level["ttft_sched_p90_ms"] is not None  # TTFT from arrival, as the open loop's

    plan = invoke(["plan", str(run_dir), "--format", "json", "--ttft-slo-ms", "60000",
                   "--tps-slo", "0"])
    assert plan.exit_code == 0, plan.stderr
    (table,) = json.loads(plan.stdout)["runs"][0]["kind_tables"]
    assert table["title"].startswith("over time") and len(table["rows"]) == len(windows)
    top = max(w["offered_rps"] for w in windows)  # every window holds so loose an SLO
    assert table["note"] == f"highest offered rate that held the SLOs: {top:.2f} requests/s"
    shown = invoke(["plan", str(run_dir), "--ttft-slo-ms", "60000", "--tps-slo", "0"])
    assert "highest offered rate that held the SLOs" in shown.stdout

    report = invoke_report([str(run_dir), "--out", str(tmp_path / "rep")])
    assert report.exit_code == 0, report.stderr
    charts = {p.name for p in (tmp_path / "rep" / "charts").iterdir()}
    assert {"K1-kind-k1-1-rate.png", "K2-kind-k2-1-ttft.png"} <= charts
    page = (tmp_path / "rep" / "report.html").read_text()
    assert 'id="chart-K1"' in page and 'id="chart-K2"' in page and "over time" in page
    assert "time-varying rate" in (tmp_path / "rep" / "report.md").read_text()
