"""Live vLLM on this machine's CPU, plain against n-gram speculation: the seed's table.

    python bench/vllm_live.py [--levels 1,2,4,8,16] [--rounds 8] [--repeats 3]

Starts both servers as the engine tests do (`tests/engines`: the copying model, vLLM pinned to
core 0, the client on the others), runs `servecap compare` across them (levels interleaved,
repeats, intervals), and prints per level each deployment's mean TTFT, ITL and per-user TPS,
the TPS speed-up of speculation with its 95% interval, and the break-even: the first level
whose speed-up interval no longer lies above 1. (`compare` keeps no server view, so vLLM's
draft acceptance comes from a `servecap run` sweep of the speculative server.)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from statistics import fmean
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.engines import procs
from tests.engines.copymodel import ensure_copy_model
from tests.engines.sweep import servecap

EXTRA_BODY = {"temperature": 0, "ignore_eos": True}


def _compare(plain: procs.Engine, spec: procs.Engine, args: argparse.Namespace,
             out: Path) -> dict[str, Any]:
    done = servecap(
        "compare", "--target", f"plain={plain.base_url}", "--target", f"spec={spec.base_url}",
        "--model", "tiny", "--concurrency", args.levels, "--rounds", str(args.rounds),
        "--repeats", str(args.repeats), "--input-tokens", "128", "--output-tokens", "128",
        "--extra-body", json.dumps(EXTRA_BODY), "--out", str(out), timeout_s=3000,
    )
    if done.returncode != 0:
        raise SystemExit(f"servecap compare exited {done.returncode}:\n{done.stderr[-3000:]}")
    print(done.stdout)
    (path,) = out.glob("compare-*/comparison.json")
    return dict(json.loads(path.read_text()))


def _mean_over_repeats(comparison: dict[str, Any], target: str, level: str,
                       field: str) -> float | None:
    values = [s["summary"].get(field) for s in comparison["slots"]
              if s["target"] == target and s["level"] == level]
    present = [v for v in values if v is not None]
    return fmean(present) if present else None


def _fmt(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def table(comparison: dict[str, Any]) -> list[str]:
    """The seed's table as Markdown rows, then the speed-up at c=1 and the break-even."""
    (pair,) = comparison["pairs"]
    lines = ["| c | TTFT ms plain | TTFT ms spec | ITL ms plain | ITL ms spec | TPS plain | "
             "TPS spec | speed-up (95% CI) |", "|" + "---|" * 8]
    break_even = None
    for level in pair["levels"]:
        key = level["level"]
        ratio = level["metrics"]["tps_mean"]["ratio"]
        cells = [
            _fmt(_mean_over_repeats(comparison, t, key, f))
            for f in ("ttft_mean_ms", "itl_mean_ms") for t in ("plain", "spec")
        ] + [_fmt(_mean_over_repeats(comparison, t, key, "tps_mean")) for t in ("plain", "spec")]
        lines.append(f"| {key.removeprefix('c=')} | " + " | ".join(cells) +
                     f" | {ratio['estimate']:.2f}x ({ratio['low']:.2f}..{ratio['high']:.2f}) |")
        if break_even is None and ratio["low"] <= 1.0:
            break_even = key
    lines.append("")
    lines.append(f"break-even: {break_even or 'none within the levels run'} (the first level "
                 "whose speed-up interval reaches 1)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="1,2,4,8,16")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    python = procs.vllm_python()
    assert python is not None
    model = ensure_copy_model()
    with tempfile.TemporaryDirectory(prefix="vllm-live-") as tmp:
        work = Path(tmp)
        plain = procs.vllm_server(python, model, work, "vllm-plain")
        spec = procs.vllm_server(python, model, work, "vllm-spec", speculative=True)
        try:
            for engine in (plain, spec):
                engine.launch()
            for engine in (plain, spec):
                engine.wait_healthy(300)
            comparison = _compare(plain, spec, args, work / "compare")
        finally:
            for engine in (plain, spec):
                engine.stop()
    print("\n".join(table(comparison)))


if __name__ == "__main__":
    main()
