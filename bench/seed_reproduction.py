"""How closely `servecap run` against the calibrated simulator reproduces the seed report.

  python bench/seed_reproduction.py demo-output/runs          # runs made by `servecap demo`
  python bench/seed_reproduction.py --run                     # run the demo first (~6 min)

Prints, per profile, the mean absolute percentage error over the 28 cells of the seed's
Appendix A (7 levels x TTFT, ITL, TPS, latency means) and the worst cell, then the shapes
the issue names: spec speedup at c=1, break-even level, vllm-spec aggregate output from
c=32 to c=64, the sglang-spec TTFT jump at c=64. Not a test: figures to quote.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "tests" / "data" / "kimi-k3-b300-appendix-a.csv"  # copy of ../shared/seed
METRICS = ("ttft_mean_ms", "itl_mean_ms", "tps_mean", "latency_mean_s")


def seed_table() -> dict[str, dict[int, dict[str, float]]]:
    table: dict[str, dict[int, dict[str, float]]] = {}
    with SEED.open() as handle:
        for row in csv.DictReader(handle):
            level = {m: float(row[m]) for m in METRICS}
            table.setdefault(row["config"], {})[int(row["concurrency"])] = level
    return table


def measured(runs_dir: Path) -> dict[str, dict[int, dict[str, float]]]:
    sys.path.insert(0, str(ROOT / "src"))
    from servecap.storage.runs import load_runs

    out: dict[str, dict[int, dict[str, float]]] = {}
    for run in load_runs([runs_dir]):
        out[run.name] = {
            lv.concurrency: {m: float(getattr(lv, m) or 0.0) for m in METRICS}
            | {"output_tok_s": float(lv.output_tok_s or 0.0)}
            for lv in run.levels
            if lv.concurrency is not None  # a sweep's levels all have one
        }
    return out


def errors(seed: dict[int, dict[str, float]], got: dict[int, dict[str, float]]) -> list[float]:
    return [
        abs(got[c][m] - seed[c][m]) / seed[c][m] for c in seed if c in got for m in METRICS
    ]


def break_even(spec: dict[int, dict[str, float]], base: dict[int, dict[str, float]]) -> str:
    for c in sorted(spec):
        if spec[c]["tps_mean"] < base[c]["tps_mean"]:
            return f"first level where spec loses: c={c}"
    return "spec never loses"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("runs", nargs="?", type=Path)
    parser.add_argument("--run", action="store_true", help="run `servecap demo` first")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per level with --run")
    args = parser.parse_args()
    runs_dir = args.runs
    if args.run or runs_dir is None:
        from servecap.api.demo import DemoOptions, run_demo

        result = run_demo(Path(tempfile.mkdtemp()) / "demo",
                          DemoOptions(rounds=args.rounds, verify_s=0))
        runs_dir = result.comparison_dir
    seed, got = seed_table(), measured(runs_dir)
    print("profile          MAPE   worst cell   (28 cells: 7 levels x TTFT, ITL, TPS, latency)")
    for name in seed:
        if name in got:
            errs = errors(seed[name], got[name])
            print(f"  {name:14s} {100 * sum(errs) / len(errs):5.1f}%  {100 * max(errs):5.1f}%")
    for spec, base in (("vllm-spec", "vllm-direct"), ("sglang-spec", "sglang-direct")):
        if spec in got and base in got:
            ratio = got[spec][1]["tps_mean"] / got[base][1]["tps_mean"]
            print(f"  {spec} / {base} TPS at c=1: {ratio:.2f}x; {break_even(got[spec], got[base])}")
    if "vllm-spec" in got:
        g = got["vllm-spec"]
        print(f"  vllm-spec output tok/s c=32 {g[32]['output_tok_s']:.0f} -> c=64 "
              f"{g[64]['output_tok_s']:.0f}")
    if "sglang-spec" in got:
        g = got["sglang-spec"]
        print(f"  sglang-spec TTFT c=32 {g[32]['ttft_mean_ms']:.0f} ms -> c=64 "
              f"{g[64]['ttft_mean_ms']:.0f} ms")


if __name__ == "__main__":
    main()
