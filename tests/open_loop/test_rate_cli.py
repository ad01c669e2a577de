"""`servecap run --rate`: bad input is one message and exit 2 before any load; a small
seeded Poisson rate sweep on the simulator, then `servecap plan` and `servecap report`,
give the highest compliant rate, the users it serves and the rate charts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from servecap.sim import SimProcessHandle, start_server_process
from servecap.storage.runs import load_run
from tests.faults.runs import invoke, invoke_report
from tests.faults.test_bad_input import assert_one_error
from tests.servers.fault_server import FaultServer, FaultServerThread

pytestmark = pytest.mark.timeout(180)


def rate_args(base_url: str, out: Path, *extra: str) -> list[str]:
    return [
        "run", "--base-url", base_url, "--warmup", "0", "--output-tokens", "4",
        "--input-tokens", "8", "--timeout", "3", "--out", str(out), *extra,
    ]


BAD_RATE_CASES: list[tuple[list[str], str]] = [
    (["--rate", "0"], "a rate must be > 0"),
    (["--rate", "1,0"], "'0'"),
    (["--rate", "-2"], "'-2'"),
    (["--rate", "nan"], "'nan'"),
    (["--rate", "fast"], "'fast'"),
    (["--rate", "1,,2"], "empty rate"),
    (["--rate", "1", "--concurrency", "4"], "--rate and --concurrency"),
    (["--rate", "1", "--users", "2"], "--rate and --users"),
    (["--rate", "1", "--duration", "10", "--requests", "5"], "one of --duration and --requests"),
    (["--rate", "1", "--duration", "0"], "--duration"),
    (["--rate", "1", "--requests", "0"], "--requests"),
    (["--rate", "1", "--arrival", "bursty"], "--arrival"),
    (["--rate", "1", "--arrival", "gamma", "--burstiness", "0"], "--burstiness"),
    (["--rate", "1", "--max-concurrency", "0"], "--max-concurrency"),
    (["--rate", "1", "--warmup-s", "-1"], "--warmup-s"),
    (["--rate", "1", "--duration", "4", "--warmup-s", "2", "--cooldown-s", "2"], "nothing"),
    (["--concurrency", "2", "--warmup-s", "3"], "--warmup-s needs --rate"),
]


@pytest.mark.parametrize(("extra", "needle"), BAD_RATE_CASES)
def test_bad_rate_input_is_one_message_and_no_load(
    extra: list[str], needle: str, tmp_path: Path
) -> None:
    server = FaultServer()
    with FaultServerThread(server) as thread:
        result = invoke(rate_args(thread.base_url, tmp_path / "out", *extra))
    assert_one_error(result, needle)
    assert server.completions == 0
    assert not list(tmp_path.glob("out/*/run.json"))


@pytest.fixture(scope="module")
def sim() -> Iterator[SimProcessHandle]:
    """A load-dependent profile, 10x faster than real time, in its own process."""
    with start_server_process("vllm-direct", time_scale=10.0) as handle:
        yield handle


@pytest.mark.slow
def test_rate_sweep_then_plan_then_report(sim: SimProcessHandle, tmp_path: Path) -> None:
    rates = [4, 16, 64]
    result = invoke(rate_args(
        sim.base_url, tmp_path / "runs", "--rate", ",".join(map(str, rates)),
        "--duration", "2", "--warmup-s", "0.25", "--cooldown-s", "0.25", "--seed", "3",
        "--output-tokens", "32", "--input-tokens", "64",
    ))
    assert result.exit_code == 0, result.stderr
    run_dir = next(p for p in (tmp_path / "runs").iterdir() if (p / "run.json").is_file())
    levels = json.loads((run_dir / "summary.json").read_text())
    assert [lv["level"] for lv in levels] == [f"rate={r}/s" for r in rates]
    for lv in levels:
        assert lv["n_left_out"] > 0 and lv["offered_rps"] in rates
        assert not lv.get("partial")  # a duration level plans its arrivals' exact count
        assert lv["send_lateness_p99_ms"] is not None and lv["ttft_sched_p90_ms"] is not None
    rows = [json.loads(x) for x in (run_dir / "requests.jsonl").read_text().splitlines()]
    # every arrival is in requests.jsonl, the window's left-outs too
    assert sum(1 for r in rows if r.get("level") == "rate=4/s") == (
        levels[0]["n_requests"] + levels[0]["n_left_out"]
    )
    # summaries recomputed from requests.jsonl leave out what the run's own did
    (run_dir / "summary.json").unlink()
    (run_dir / "summary.csv").unlink()
    again = load_run(run_dir).levels
    assert [(lv.n_requests, lv.n_left_out) for lv in again] == [
        (lv["n_requests"], lv["n_left_out"]) for lv in levels
    ]
    # An SLO between the lowest and the highest rate's per-user TPS: the plan must stop
    # below the top rate (the simulator's TPS falls as the batch grows).
    low, high = levels[0]["tps_p90"], levels[-1]["tps_p90"]
    assert high < low
    tps_slo = (low + high) / 2
    plan = invoke(["plan", str(run_dir), "--format", "json", "--tps-slo", str(tps_slo),
                   "--ttft-slo-ms", "5000", "--think-time-s", "10"])
    assert plan.exit_code == 0, plan.stderr
    top = json.loads(plan.stdout)["runs"][0]
    assert top["rate_max"] in rates[:-1] and top["top_level"] == f"rate={top['rate_max']:g}/s"
    at_top = next(lv for lv in levels if lv["offered_rps"] == top["rate_max"])
    assert top["users"] == round(top["rate_max"] * (at_top["latency_mean_s"] + 10))
    assert all("goodput_rps" in lv and "slo_attainment" in lv for lv in top["levels"])
    assert top["levels"][-1]["tps_ok"] is False
    assert top["levels"][-1]["goodput_rps"] < rates[-1]
    table = invoke(["plan", str(run_dir), "--tps-slo", str(tps_slo), "--ttft-slo-ms", "5000"])
    assert f"top rate rate={top['rate_max']:g}/s" in table.stdout

    report = invoke_report([str(run_dir), "--out", str(tmp_path / "rep"),
                            "--tps-slo", str(tps_slo), "--ttft-slo-ms", "5000"])
    assert report.exit_code == 0, report.stderr
    charts = {p.name for p in (tmp_path / "rep" / "charts").iterdir()}
    for slug in ("13-rate-ttft", "14-rate-latency", "15-rate-achieved", "16-rate-goodput"):
        assert f"{slug}.png" in charts
    page = (tmp_path / "rep" / "report.html").read_text()
    assert all(f'id="chart-{n}"' in page for n in ("13", "14", "15", "16"))
    model = json.loads((tmp_path / "rep" / "report.json").read_text())
    goodput = model["goodput"][model["runs"][0]["name"]]
    assert goodput[f"rate={rates[-1]}/s"] == pytest.approx(top["levels"][-1]["goodput_rps"])
    assert "Open loop: against offered rate" in (tmp_path / "rep" / "report.md").read_text()


@pytest.mark.slow
def test_an_open_loop_sends_a_length_distribution_and_records_what_it_asked(
    sim: SimProcessHandle, tmp_path: Path
) -> None:
    # the workload flags (replay's branch) and the open loop (this one) in one run
    result = invoke(rate_args(
        sim.base_url, tmp_path / "runs", "--rate", "8", "--requests", "12", "--warmup-s", "0",
        "--cooldown-s", "0", "--input-tokens", "uniform:8:24", "--output-tokens", "uniform:2:6",
    ))
    assert result.exit_code == 0, result.stderr
    run_dir = next(p for p in (tmp_path / "runs").iterdir() if (p / "run.json").is_file())
    rows = [json.loads(x) for x in (run_dir / "requests.jsonl").read_text().splitlines()]
    measured = [r for r in rows if r.get("level") == "rate=8/s"]
    assert len(measured) == 12
    assert all(8 <= r["input_tokens_sent"] <= 24 for r in measured)
    assert all(2 <= r["max_tokens_sent"] <= 6 for r in measured)
    (level,) = json.loads((run_dir / "summary.json").read_text())
    assert level["send_lateness_p99_ms"] is not None and "lateness_p99_ms" not in level
    assert 8 <= level["input_tokens_sent_mean"] <= 24
