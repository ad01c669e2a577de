"""The highest Poisson rate of 128-token streams at which one client core keeps its
schedule: p99 send lateness (`sent_at - scheduled_at`) under 1 ms, against the simulator's
deterministic profile (TTFT 50 ms, ITL 10 ms: each stream holds ~1.3 s and 128 chunks),
and the lateness at twice that rate.

The simulator runs as a child process pinned to the last CPU, the client (servecap's own
open-loop scheduler and streaming client, on uvloop, in this process) on CPU 0. Each rate
runs `--seconds` of arrivals with the default steady-state window; a rate is sustained
when its window's p99 lateness is under `--limit-ms`. Rates double until one fails, then
bisect between the last good and the first bad. Prints one line a rate and the figures.
Usage::

    python bench/open_loop.py [--start 8] [--seconds 12] [--limit-ms 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import tempfile
from pathlib import Path

import numpy as np

from servecap.api.run.run import Secrets, run_benchmark_async
from servecap.api.run.run_config import RunConfig
from servecap.core.clock import now_ns, sleep_until
from servecap.core.config import ClientOptions
from servecap.core.summary import LevelSummary
from servecap.kinds.open_loop import OpenLoad
from servecap.load.event_loop import loop_factory
from servecap.sim import start_server_process


def pin(cpu: int, pid: int = 0) -> None:
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setaffinity(pid, {cpu})


def measure(base_url: str, rate: float, seconds: float, out: Path) -> LevelSummary:
    load = OpenLoad(rates=[rate], duration_s=seconds, warmup_s=2.0, cooldown_s=2.0, seed=1)
    config = RunConfig(
        input_tokens=128, output_tokens=128, warmup=0, out_dir=str(out), load=load,
        client=ClientOptions(base_url=base_url),
    )
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        outcome = runner.run(run_benchmark_async(config, Secrets()))
    return outcome.levels[0]


def timer_floor(n: int = 300, gap_s: float = 0.007) -> tuple[float, float]:
    """p99 and max lateness (ms) of the scheduler's own wait on an idle loop: the floor
    this machine puts under every send (a loaded shared machine shows it here first)."""

    async def wakes() -> list[float]:
        late = []
        for _ in range(n):
            target = now_ns() + round(gap_s * 1e9)
            await sleep_until(target)
            late.append((now_ns() - target) / 1e6)
        return late

    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        values = np.asarray(runner.run(wakes()))
    return float(np.percentile(values, 99)), float(values.max())


def line(rate: float, lv: LevelSummary) -> str:
    return (
        f"rate {rate:8.1f}/s  n {lv.n_requests:5d}  lateness mean {lv.send_lateness_mean_ms:7.3f} "
        f"p99 {lv.send_lateness_p99_ms:8.3f} max {lv.send_lateness_max_ms:8.3f} ms  "
        f"cpu {lv.client_cpu_pct or 0:5.1f}%  achieved {lv.achieved_rps or 0:7.1f}/s  "
        f"tokens {lv.completion_tokens_mean or 0:.0f}  client-bound {lv.client_bound}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start", type=float, default=8.0)
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--limit-ms", type=float, default=1.0)
    parser.add_argument("--bisect", type=int, default=3)
    args = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as tmp, start_server_process("deterministic") as sim:
        pin(cpus[-1], sim.proc.pid)
        pin(cpus[0])
        floor_p99, floor_max = timer_floor()
        print(f"idle-loop wake-up lateness: p99 {floor_p99:.3f} ms, max {floor_max:.3f} ms "
              f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)", flush=True)
        results: dict[float, LevelSummary] = {}

        def ok(rate: float) -> bool:
            lv = measure(sim.base_url, rate, args.seconds, Path(tmp))
            results[rate] = lv
            print(line(rate, lv), flush=True)
            return lv.send_lateness_p99_ms is not None and lv.send_lateness_p99_ms < args.limit_ms

        good, bad, rate = 0.0, 0.0, args.start
        while ok(rate):
            good, rate = rate, rate * 2
        bad = rate
        for _ in range(args.bisect if good else 0):
            middle = round((good + bad) / 2, 1)
            if ok(middle):
                good = middle
            else:
                bad = middle
        if not good:
            print(f"even {args.start}/s misses p99 < {args.limit_ms} ms; try a lower --start")
            return
        double = results.get(2 * good) or measure(sim.base_url, 2 * good, args.seconds, Path(tmp))
        print(line(2 * good, double))
        print(f"highest rate with p99 send lateness < {args.limit_ms} ms: {good:g}/s "
              f"(p99 {results[good].send_lateness_p99_ms:.3f} ms, in flight ~{good * 1.32:.0f})")
        print(f"at 2x ({2 * good:g}/s): p99 {double.send_lateness_p99_ms:.3f} ms, "
              f"max {double.send_lateness_max_ms:.3f} ms, "
              f"mean {double.send_lateness_mean_ms:.3f} ms")


if __name__ == "__main__":
    main()
