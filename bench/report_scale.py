"""Scale check for `servecap report`: runs holding 1,000,000 requests in total.

Generates synthetic measured runs (requests.jsonl with every request, plus the summary.json
that `servecap run` writes), then times load_runs + build_report + write_report in a child
process and prints its wall time and peak RSS. The report reads the summaries; it never
re-reads requests.jsonl (records are read only when a run lacks its summary).

    python bench/report_scale.py [--requests 1000000] [--configs 4] [--dir DIR] [--keep]

Target: under 30 s and 2 GiB.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

import numpy as np

from servecap.core.run_info import RunInfo
from servecap.core.summary import LevelSummary, column
from servecap.stats.percentiles import describe
from servecap.storage.run_dir import new_run_dir, write_run_info, write_summaries

LEVELS = (1, 2, 4, 8, 16, 32, 64)
TOKENS = 128
LINE = (
    '{{"request_id":{i},"concurrency":{c},"stream_index":{s},"scheduled_at":{t0},'
    '"sent_at":{t0},"first_byte_at":{fb},"first_token_at":{ft},"last_token_at":{lt},'
    '"ended_at":{end},"chunk_at":[],"chunk_tokens":[],"prompt_tokens":128,'
    '"completion_tokens":{n},"token_source":"usage","status":"ok"}}\n'
)


def level_arrays(rng: np.random.Generator, c: int, n: int, speed: float) -> dict[str, np.ndarray]:
    """TTFT (ns), ITL (ns) and derived timestamps for `n` requests at concurrency `c`."""
    ttft = rng.gamma(4.0, (60e6 + 12e6 * c) / 4.0, n)
    itl = rng.gamma(20.0, (8e6 + 0.35e6 * c) * speed / 20.0, n)
    decode = itl * (TOKENS - 1)
    return {"ttft": ttft, "itl": itl, "latency": ttft + decode + 0.2e6}


def write_level(
    handle: TextIO, rng: np.random.Generator, c: int, n: int, start_id: int, speed: float
) -> LevelSummary:
    arr = level_arrays(rng, c, n, speed)
    t0 = np.cumsum(arr["latency"] / c).astype(np.int64)
    ft = t0 + arr["ttft"].astype(np.int64)
    lt = t0 + (arr["ttft"] + arr["itl"] * (TOKENS - 1)).astype(np.int64)
    end = t0 + arr["latency"].astype(np.int64)
    lines = [
        LINE.format(i=start_id + k, c=c, s=k % c, t0=t0[k], fb=ft[k] - 1000, ft=ft[k],
                    lt=lt[k], end=end[k], n=TOKENS)
        for k in range(n)
    ]
    handle.writelines(lines)
    wall_s = float(end.max() - t0.min()) / 1e9
    fields: dict[str, object] = {
        "concurrency": c, "n_requests": n, "n_ok": n, "n_failed": 0, "error_rate": 0.0,
        "wall_s": wall_s, "rps": n / wall_s, "output_tok_s": n * TOKENS / wall_s,
        "served_concurrency": float(arr["latency"].sum()) / 1e9 / wall_s,
        "completion_tokens_mean": float(TOKENS), "prompt_tokens_mean": 128.0,
        "tokens_from_usage": True, "client_bound": False,
    }
    tps = TOKENS / (arr["latency"] / 1e9)
    for metric, values, hib in (("ttft", arr["ttft"] / 1e6, False),
                                ("itl", arr["itl"] / 1e6, False),
                                ("latency", arr["latency"] / 1e9, False), ("tps", tps, True)):
        fields.update({column(metric, s): v for s, v in describe(values, hib).items()})
    return LevelSummary.model_validate(fields)


def make_runs(root: Path, total: int, configs: int) -> None:
    rng = np.random.default_rng(0)
    per_run = total // configs
    rounds = per_run // sum(LEVELS)
    names = [f"cfg{i // 2}-{'spec' if i % 2 else 'direct'}" for i in range(configs)]
    for r, name in enumerate(names):
        run_dir = new_run_dir(root, name)
        counts = [rounds * c for c in LEVELS]
        counts[-1] += per_run - sum(counts) + (total - per_run * configs if r == 0 else 0)
        levels, next_id = [], 0
        speed = 0.55 if name.endswith("spec") else 1.0
        with (run_dir / "requests.jsonl").open("w", encoding="utf-8") as handle:
            for c, n in zip(LEVELS, counts, strict=True):
                levels.append(write_level(handle, rng, c, n, next_id, speed))
                next_id += n
        config = {"concurrency": list(LEVELS), "rounds": rounds, "input_tokens": 128,
                  "output_tokens": TOKENS, "warmup": 1, "model": "synthetic"}
        write_run_info(run_dir, RunInfo(name=name, config=config,
                                        deployment={"engine": "synthetic", "speed": speed}))
        write_summaries(run_dir, levels)


CHILD = """
import sys, time
from pathlib import Path
from servecap.storage.runs import load_runs
from servecap.api.stored.report import build_report, write_report
t = time.perf_counter()
runs = load_runs([Path(sys.argv[1])])
model = build_report(runs)
write_report(model, Path(sys.argv[2]))
print(f"{time.perf_counter() - t:.2f}")
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--configs", type=int, default=4)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="servecap-report-scale-"))
    try:
        t = time.perf_counter()
        make_runs(root / "runs", args.requests, args.configs)
        size = sum(p.stat().st_size for p in (root / "runs").rglob("requests.jsonl"))
        lines = sum(1 for p in (root / "runs").rglob("requests.jsonl") for _ in p.open("rb"))
        print(f"generated {lines:,} requests ({size / 2**20:.0f} MiB of requests.jsonl) "
              f"in {time.perf_counter() - t:.1f} s")
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", CHILD, str(root / "runs"),
                              str(root / "report")], check=True, capture_output=True, text=True)
        wall = time.perf_counter() - t
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(f"report: {wall:.2f} s wall including interpreter start "
              f"({out.stdout.strip()} s in load+build+write), "
              f"peak RSS {peak_kib / 1024:.0f} MiB")
        ok = wall < 30 and peak_kib < 2 * 2**20
        print("within target (< 30 s, < 2 GiB)" if ok else "OVER target (30 s, 2 GiB)")
        return 0 if ok else 1
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
