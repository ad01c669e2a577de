"""The peers' files (tests/data/peers) and a hand computation of C_max from their own
per-request numbers, independent of servecap's records and summaries."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from servecap.cli.main import app

PEERS = Path(__file__).resolve().parents[2] / "data" / "peers"
AIPERF = [PEERS / "aiperf" / c / "profile_export_aiperf.json" for c in ("c2", "c8")]
GUIDELLM = PEERS / "guidellm" / "benchmarks.json"
SGLANG = PEERS / "sglang-bench" / "sglang.jsonl"
BR_EXAMPLE = PEERS / "benchmark-report" / "br_v0_2_1_example.yaml"
VLLM = [PEERS / "vllm-bench" / f"vllm-c{c}.json" for c in (2, 8)]
VLLM_AGGREGATE = PEERS / "vllm-bench" / "vllm-rate4-aggregate.json"

runner = CliRunner()


def servecap(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def import_one(out: Path, *files: Path) -> Path:
    code, output = servecap("import", *map(str, files), "--out", str(out))
    assert code == 0, output
    dirs = [Path(line) for line in output.split() if line.strip()]
    assert len(dirs) == 1, output
    return dirs[0]


def plan_json(run_dir: Path, ttft_ms: float, tps: float) -> dict:
    code, output = servecap("plan", str(run_dir), "--ttft-slo-ms", str(ttft_ms),
                            "--tps-slo", str(tps), "--stat", "p90", "--format", "json")
    assert code == 0, output
    return json.loads(output)["runs"][0]


def p90_tail(ttft_ms: list[float], tps: list[float]) -> tuple[float, float]:
    """DESIGN's P90: the 90th percentile of TTFT, the 10th of TPS, linear interpolation."""
    return float(np.percentile(ttft_ms, 90)), float(np.percentile(tps, 10))


def top_passing(levels: dict[float, tuple[float, float]], ttft_slo: float,
                tps_slo: float) -> float | None:
    """The highest level at which it and every lower one meet both SLOs."""
    top = None
    for value in sorted(levels):
        ttft, tps = levels[value]
        if ttft > ttft_slo or tps < tps_slo:
            break
        top = value
    return top
