"""How long `servecap verify --search` takes on the simulator, and whether the client kept up.

Issue 16's speed target: a verify or search run on the simulator at `--time-scale 10` with
45 s of think time (4.5 s of client time: the simulator runs ten times fast, so the users
think ten times fast too), predicted N around 400, done in under 5 minutes and no level
client-bound. The simulator (`vllm-direct`) runs as a child process pinned to the last CPU,
the client (this process) to the first; a closed-loop sweep gives the plan, then verify
searches. Printed: the sweep's C_max and predicted users, every verify level (users, verdict,
mean concurrency against N x R / (R + Z), loop lag p99, client CPU, client-bound), and the
verify run's wall time against the 5-minute target.

    python bench/verify_speed.py [--think exp:4.5] [--duration 25] [--budget 6]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from servecap.api.predict.verify import VerifyOptions, summary_line, verify
from servecap.api.run.run import Secrets, run_benchmark
from servecap.api.run.run_config import RunConfig
from servecap.core.config import ClientOptions
from servecap.sim import start_server_process
from servecap.storage.runs import load_run

TARGET_S = 300.0


def pin(cpu: int, pid: int = 0) -> None:
    os.sched_setaffinity(pid, {cpu})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="vllm-direct")
    parser.add_argument("--time-scale", type=float, default=10.0)
    parser.add_argument("--think", default="exp:4.5", help="client seconds (45 s at x10)")
    parser.add_argument("--ttft-slo-ms", type=float, default=400.0)
    parser.add_argument("--tps-slo", type=float, default=200.0)
    parser.add_argument("--duration", type=float, default=25.0)
    parser.add_argument("--budget", type=int, default=6)
    parser.add_argument("--tolerance", type=float, default=0.1)
    args = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as tmp, start_server_process(
        args.profile, time_scale=args.time_scale
    ) as sim:
        pin(cpus[-1], sim.proc.pid)
        pin(cpus[0])
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; simulator "
              f"{args.profile} x{args.time_scale:g} on CPU {cpus[-1]}, client on CPU {cpus[0]}")
        start = time.perf_counter()
        sweep = run_benchmark(RunConfig(
            name="sweep", concurrency=[8, 16, 32, 64], rounds=5, warmup=1, out_dir=tmp,
            client=ClientOptions(base_url=sim.base_url),
        ), Secrets())
        sweep_s = time.perf_counter() - start
        options = VerifyOptions(
            ttft_slo_ms=args.ttft_slo_ms, tps_slo=args.tps_slo, think=args.think,
            duration_s=args.duration, search=True, tolerance=args.tolerance,
            budget=args.budget, out_dir=tmp,
        )
        start = time.perf_counter()
        result, outcome = verify(sweep.run_dir, options)
        verify_s = time.perf_counter() - start
        print(f"sweep c=8..64 x5 rounds: {sweep_s:.0f} s")
        print(summary_line(result))
        bound = 0
        for level in load_run(outcome.run_dir).levels:
            bound += bool(level.client_bound)
            print(f"  users {level.key.value:>5}: mean concurrency "
                  f"{level.mean_concurrency or 0:7.1f}, law {level.law_concurrency or 0:7.1f} "
                  f"({100 * (level.law_error or 0):+.1f}%), n {level.n_ok:5d}, loop lag p99 "
                  f"{level.loop_lag_p99_ms or 0:6.2f} ms, client CPU "
                  f"{level.client_cpu_pct or 0:5.1f}%, client delay mean "
                  f"{level.client_delay_mean_ms or 0:6.2f} ms, client-bound {level.client_bound}")
    print(f"verify --search ({len(result.levels)} levels of {args.duration:g} s + ramp): "
          f"{verify_s:.0f} s (target < {TARGET_S:.0f} s); client-bound levels: {bound}; "
          f"load average {os.getloadavg()[0]:.1f}")

if __name__ == "__main__":
    main()
