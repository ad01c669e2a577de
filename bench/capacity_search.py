"""`servecap capacity` against the seed's grid, side by side, on the simulated deployments.

For each profile: `--runs` capacity searches (no users level: the search alone is what the
grid is compared with), then, with `--grid`, one run of the seed's grid (c = 1..64, 10
rounds: 1,270 requests) on the same simulator. Per profile it prints the searches' C_max and
first miss, the grid-equivalent C_max (the largest power of two at or below C_max), how
often that equals the seed's own P90 C_max and (with `--grid`) the grid's own P90 C_max on
the same simulator, which tells a search's error from the simulator's distance to the seed
(the seed's level within 10% of the SLO would make an "undecided" miss count as right: no
seed level at c = 16 or 32 is, so the count is of equals), and requests and seconds
against the grid's. Figures vary with the machine's load: quote them with the date and machine.

    python bench/capacity_search.py [--runs 10] [--time-scale 10] [--grid]
        [--profiles vllm-direct,vllm-spec,sglang-direct,sglang-spec]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from servecap.api.capacity.by_load import find_capacity
from servecap.api.capacity.capacity import CapacityOptions
from servecap.api.capacity.demo import SEED_P90_CMAX
from servecap.api.run.run import run_benchmark
from servecap.api.run.run_config import RunConfig
from servecap.core.config import SLO, ClientOptions, on_clock
from servecap.kinds.registry import kind_of
from servecap.sim import start_server_process
from servecap.stats.capacity import plan_levels
from servecap.storage.capacity_answer import CapacityAnswer, grid_equivalent
from servecap.storage.runs import load_run

GRID_REQUESTS = 1270


@dataclass
class Search:
    answer: CapacityAnswer
    seconds: float

    @property
    def miss_verdict(self) -> str | None:
        return next((p.verdict for p in self.answer.probes
                     if p.concurrency == self.answer.first_miss), None)


def one_search(url: str, out: Path) -> Search:
    config = RunConfig(client=ClientOptions(base_url=url), out_dir=str(out / "runs"))
    started = time.monotonic()
    answer = find_capacity(config, CapacityOptions(verify=False, max_time_s=1800))
    return Search(answer, time.monotonic() - started)


def one_grid(url: str, out: Path, scale: float) -> tuple[float, int | None]:
    """The grid's seconds and its own P90 C_max at the seed's SLOs (on the simulator's
    clock, as the search judges its probes)."""
    config = RunConfig(client=ClientOptions(base_url=url), out_dir=str(out / "grid"))
    started = time.monotonic()
    run_dir = run_benchmark(config).run_dir
    seconds = time.monotonic() - started
    plan = plan_levels(load_run(Path(run_dir)).levels, on_clock(SLO(), scale), kind_of)
    return seconds, plan.c_max


def bench_profile(profile: str, runs: int, scale: float, grid: bool) -> None:
    server = start_server_process(profile, time_scale=scale)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            found = [one_search(server.base_url, Path(tmp) / str(i)) for i in range(runs)]
            grid_s, grid_cmax = (one_grid(server.base_url, Path(tmp), scale) if grid
                                 else (None, None))
    finally:
        server.stop()
    seed = SEED_P90_CMAX.get(profile)
    right = sum(grid_equivalent(f.answer.c_max) == seed for f in found)
    requests = [f.answer.requests for f in found]
    seconds = [f.seconds for f in found]
    print(f"\n{profile} (x{scale:g}): seed P90 C_max {seed}")
    for f in found:
        a = f.answer
        print(f"  C_max {a.c_max} first miss {a.first_miss} ({f.miss_verdict}), "
              f"grid-equivalent {grid_equivalent(a.c_max)}, {a.requests} requests, "
              f"{f.seconds:.0f} s, {a.status}")
    print(f"  grid-equivalent = seed in {right} of {runs}")
    if grid_cmax is not None:
        same = sum(grid_equivalent(f.answer.c_max) == grid_cmax for f in found)
        print(f"  the grid's own P90 C_max on this simulator: {grid_cmax}; "
              f"grid-equivalent = it in {same} of {runs}")
    print(f"  requests: median {statistics.median(requests):.0f} against the grid's "
          f"{GRID_REQUESTS} (ratio {statistics.median(requests) / GRID_REQUESTS:.2f})")
    if grid_s is not None:
        print(f"  seconds: median {statistics.median(seconds):.0f} against the grid's "
              f"{grid_s:.0f} (ratio {statistics.median(seconds) / grid_s:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", default=",".join(SEED_P90_CMAX))
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--time-scale", type=float, default=10.0)
    parser.add_argument("--grid", action="store_true")
    args = parser.parse_args()
    for profile in args.profiles.split(","):
        bench_profile(profile, args.runs, args.time_scale, args.grid)


if __name__ == "__main__":
    main()
