"""Load at scale: streams held and requests/s with 1, 2 and 4 worker processes, and a run
that holds 10,000 concurrent streams with every request accounted for.

Part 1 (`--workers 1,2,4`): the simulator's deterministic profile (TTFT 50 ms, ITL 10 ms,
load-independent) in its own process; `servecap run` closed loop at `--concurrency`
(default 512) streams of `--tokens` (32) tokens, `--rounds` each, with each worker count.
Per count: requests/s, streams held (served concurrency: the load the server saw), TTFT
mean against the schedule's 50 ms (`--time-scale 0.1`: a lighter simulator, 500 ms), the
simulator's own mean first-token lateness (its /metrics: the part of TTFT above the
schedule that is the server's, not the client's), the workers' worst loop lag and CPU, and
which workers flagged themselves client-bound.

Part 2 (`--streams 10000`): the same profile 100 times slower (`--time-scale 0.01`: TTFT
5 s, one token a second), one closed level of `--streams` streams of `--long-tokens` (10)
tokens, with the workers `--workers auto` picks for it. It checks that every request is
accounted for three ways (rows in requests.jsonl, the level's n_ok, the simulator's own
`vllm:request_success_total`),
prints the most streams in flight at once (from the rows' send and end stamps), and the
client processes' memory per stream: peak RSS of the parent and its workers during the run,
less the same for a 10-stream run with the same workers, over the streams.

Usage::

    python bench/scale.py [--workers 1,2,4] [--concurrency 512] [--streams 10000]
    python bench/scale.py --skip-scale   # only the 10,000-stream run
    python bench/scale.py --skip-streams --concurrency 1024 --tokens 10 --time-scale 0.1

Figures on a shared 2-core machine are noisy: four worker processes on two cores contend
with each other and the simulator; quote them with the load they ran under.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from servecap.api.run.run import Secrets, run_benchmark_async
from servecap.api.run.run_config import RunConfig
from servecap.core.config import ClientOptions
from servecap.load.shares import STREAMS_PER_WORKER
from servecap.load.workers import usable_cores
from servecap.sim import start_server_process


def client_pids() -> list[int]:
    """This process and its worker processes."""
    pids = [os.getpid()]
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid() and b"worker_proc" in cmdline:
            pids.append(int(entry))
    return pids


def rss_bytes(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


class PeakRss:
    """Samples the client processes' total RSS every 0.2 s in a thread; keeps the peak."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(0.2):
            self.peak = max(self.peak, rss_bytes(client_pids()))


def sim_counter(base_url: str, name: str) -> float:
    """One counter from the simulator's own /metrics."""
    text = urllib.request.urlopen(base_url.removesuffix("/v1") + "/metrics", timeout=5).read()
    for line in text.decode().splitlines():
        if line.startswith(name + "_total"):
            return float(line.split()[-1])
    raise RuntimeError(f"no {name}_total in /metrics")


def server_successes(base_url: str) -> float:
    return sim_counter(base_url, "vllm:request_success")


def server_first_token_late_ms(base_url: str) -> tuple[float, float]:
    """(sum of s, count) of the simulator's first-token writes after their target."""
    return (sim_counter(base_url, "sim:first_token_lateness_seconds"),
            sim_counter(base_url, "sim:first_token_lateness_chunks"))


def run(base_url: str, out: Path, workers: int | None, c: int, rounds: int, tokens: int,
        **client: Any) -> Any:
    config = RunConfig(
        name=f"scale-w{workers or 'auto'}-c{c}", concurrency=[c], rounds=rounds,
        output_tokens=tokens, input_tokens=32, warmup=0, out_dir=str(out),
        client=ClientOptions(base_url=base_url, **client), server_metrics="off",
        workers=workers,
    )
    return asyncio.run(run_benchmark_async(config, Secrets()))


def max_in_flight(rows: list[dict[str, Any]]) -> int:
    events = sorted([(r["sent_at"], 1) for r in rows if r.get("sent_at")]
                    + [(r["ended_at"], -1) for r in rows if r.get("ended_at")])
    now = peak = 0
    for _, step in events:
        now += step
        peak = max(peak, now)
    return peak


def part_scale(args: argparse.Namespace, out: Path) -> None:
    ttft, itl = 50 / args.time_scale, 10 / args.time_scale
    print(f"== workers: closed loop c={args.concurrency}, {args.tokens} tokens, "
          f"{args.rounds} rounds, deterministic profile (TTFT {ttft:g} ms, ITL {itl:g} ms)")
    print("workers  req/s  streams_held  ttft_mean_ms  sim_late_ms  lag_p99_max_ms  "
          "cpu_max_pct  client_bound_workers  wall_s")
    with start_server_process("deterministic", time_scale=args.time_scale) as sim:
        for n in args.workers:
            late0, count0 = server_first_token_late_ms(sim.base_url)
            outcome = run(sim.base_url, out, n, args.concurrency, args.rounds, args.tokens)
            late1, count1 = server_first_token_late_ms(sim.base_url)
            # the simulator's own lateness: TTFT above the schedule that is the server's
            sim_late = 1000 * (late1 - late0) / max(count1 - count0, 1)
            lv = outcome.levels[0]
            bound = lv.workers_client_bound if lv.workers else (
                ["the one process"] if lv.client_bound else [])
            print(f"{n:>7}  {lv.rps:5.0f}  {lv.served_concurrency:12.0f}  "
                  f"{lv.ttft_mean_ms:12.1f}  {sim_late:11.1f}  {lv.loop_lag_p99_ms or 0:14.1f}  "
                  f"{lv.client_cpu_pct or 0:11.0f}  {bound!s:>20}  {lv.wall_s:6.1f}")


def part_streams(args: argparse.Namespace, out: Path) -> None:
    n = args.streams
    print(f"== {n} concurrent streams: TTFT 5 s, a token a second, {args.long_tokens} tokens")
    workers = max(1, min(usable_cores(), math.ceil(n / STREAMS_PER_WORKER)))  # what auto picks
    with start_server_process("deterministic", time_scale=0.01) as sim:
        with PeakRss() as small:  # the same processes, holding 10 streams
            run(sim.base_url, out, workers, 10, 1, args.long_tokens)
        before = server_successes(sim.base_url)
        t0 = time.monotonic()
        with PeakRss() as big:
            outcome = run(sim.base_url, out, workers, n, 1, args.long_tokens,
                          connect_timeout_s=60.0, stall_timeout_s=120.0, timeout_s=600.0)
        wall = time.monotonic() - t0
        served = server_successes(sim.base_url) - before
    lv = outcome.levels[0]
    rows = [json.loads(line) for line in
            (outcome.run_dir / "requests.jsonl").read_text().splitlines()]
    per_stream = (big.peak - small.peak) / n
    print(f"rows {len(rows)}  ok {lv.n_ok}  failed {lv.n_failed} {lv.failures}  "
          f"server completed {served:.0f}  all accounted: "
          f"{len(rows) == n == lv.n_ok == int(served)}")
    print(f"most in flight at once {max_in_flight(rows)}  served concurrency "
          f"{lv.served_concurrency:.0f}  workers {lv.workers}  client-bound workers "
          f"{lv.workers_client_bound}  TTFT mean {lv.ttft_mean_ms:.0f} ms (schedule 5000)  "
          f"ITL mean {lv.itl_mean_ms:.0f} ms (schedule 1000)")
    sent = [r["sent_at"] - r["scheduled_at"] for r in rows if r.get("sent_at")]
    first = [r["first_byte_at"] - r["sent_at"] for r in rows if r.get("first_byte_at")]
    print(f"where TTFT went: scheduled -> sent mean {sum(sent) / len(sent) / 1e6:.0f} ms, "
          f"max {max(sent) / 1e6:.0f} ms; sent -> first byte mean "
          f"{sum(first) / len(first) / 1e6:.0f} ms (schedule 5000)")
    print(f"client RSS peak {big.peak / 2**20:.0f} MiB (10-stream run {small.peak / 2**20:.0f}"
          f" MiB): {per_stream / 1024:.1f} KiB per stream; wall {wall:.0f} s")
    for row in lv.worker_health or []:
        print(f"  worker {row['worker']}: {row['requests']} requests, loop lag p99 "
              f"{row.get('loop_lag_p99_ms', 0):.1f} ms, CPU {row.get('client_cpu_pct', 0):.0f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--concurrency", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--time-scale", type=float, default=1.0,
                        help="part 1's simulator speed (0.1: TTFT 500 ms, ITL 100 ms)")
    parser.add_argument("--streams", type=int, default=10_000)
    parser.add_argument("--long-tokens", type=int, default=10)
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--skip-streams", action="store_true")
    args = parser.parse_args()
    args.workers = [int(w) for w in args.workers.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_scale:
            part_scale(args, Path(tmp))
        if not args.skip_streams:
            part_streams(args, Path(tmp))


if __name__ == "__main__":
    main()
