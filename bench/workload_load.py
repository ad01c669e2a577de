"""Load times of workload inputs: a 100k-row dataset, and the Mooncake trace's first prompts.

Each measurement runs in a fresh child process, so its peak RSS is its own (the parent's
imports and the generated file do not count). Wall and CPU seconds are both printed: on a
shared machine the CPU figure is the one that says what one free core would take.

- `dataset`: read a generated JSONL dataset of 100,000 rows (`prompt` rows and ShareGPT
  conversations of 4 turns, prompts of 200-2,000 characters) and sample 100,000 rows.
  Target: under 2 s.
- `mooncake`: read the whole Mooncake conversation trace and build the text of its first
  1,000 prompts (lazily, one by one, keeping none). Target: under 3 s, memory bounded.

    python bench/workload_load.py [--trace ../shared/traces/mooncake-conversation.jsonl]
        [--rows 100000] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DEFAULT_TRACE = "/work/shared/traces/mooncake-conversation.jsonl"


def make_dataset(path: Path, rows: int, fmt: str, seed: int = 0) -> None:
    """`rows` rows of `fmt` (`prompt` or `sharegpt`) with prompts of 200-2,000 characters."""
    rng = np.random.default_rng(seed)
    words = "the of model server token prompt latency cache request stream".split()
    with path.open("w") as out:
        for i in range(rows):
            n = int(rng.integers(32, 323))  # about 6.2 characters a word
            text = " ".join(words[j] for j in rng.integers(0, len(words), n))
            if fmt == "prompt":
                row: dict[str, object] = {"prompt": text, "max_tokens": int(rng.integers(1, 512))}
            else:
                turns = [("human", text), ("gpt", text[::-1]), ("human", text[:99]), ("gpt", "ok")]
                row = {"id": str(i), "conversations": [{"from": f, "value": v} for f, v in turns]}
            out.write(json.dumps(row) + "\n")


def child_dataset(path: str) -> dict[str, float]:
    from servecap.workload.datasets import read_dataset

    start, cpu = time.perf_counter(), time.process_time()
    data = read_dataset(path)
    rows = data.sample(len(data), seed=1)
    elapsed = time.perf_counter() - start
    return {"seconds": elapsed, "cpu_s": time.process_time() - cpu, "rows": len(rows)}


def child_mooncake(path: str, prompts: int) -> dict[str, float]:
    from servecap.workload.sources import TraceSource
    from servecap.workload.traces import read_trace

    start, cpu = time.perf_counter(), time.process_time()
    trace = read_trace(path)
    loaded = time.perf_counter() - start
    source = TraceSource(trace)
    chars = 0
    for i in range(prompts):
        chars += len(source.request(i).text)
    elapsed = time.perf_counter() - start
    return {
        "seconds": elapsed,
        "cpu_s": time.process_time() - cpu,
        "load_s": loaded,
        "rows": len(trace),
        "prompt_mb": chars / 1e6,
    }


def run_child(args: list[str]) -> dict[str, float]:
    """Run this script as a child; its result line plus its own peak RSS in MiB."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default=DEFAULT_TRACE)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--prompts", type=int, default=1000)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--child", nargs="+", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, path = args.child[0], args.child[1]
        result = child_dataset(path) if kind == "dataset" else child_mooncake(path, args.prompts)
        result["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(result))
        return
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for fmt in ("prompt", "sharegpt"):
            path = Path(tmp) / f"{fmt}.jsonl"
            make_dataset(path, args.rows, fmt)
            size = path.stat().st_size / 1e6
            r = run_child(["dataset", str(path)])
            print(
                f"dataset {fmt:8s} {r['rows']:,} rows ({size:.0f} MB): {r['seconds']:.2f} s "
                f"wall, {r['cpu_s']:.2f} s CPU (target < 2 s), peak RSS {r['peak_rss_mib']:.0f} MiB"
                f" (load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)"
            )
    r = run_child(["mooncake", args.trace, "--prompts", str(args.prompts)])
    print(
        f"mooncake {r['rows']:,} rows loaded in {r['load_s']:.2f} s; with its first "
        f"{args.prompts:,} prompts ({r['prompt_mb']:.0f} MB of text, none kept): "
        f"{r['seconds']:.2f} s wall, {r['cpu_s']:.2f} s CPU (target < 3 s), "
        f"peak RSS {r['peak_rss_mib']:.0f} MiB"
    )


if __name__ == "__main__":
    main()
