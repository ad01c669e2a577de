"""`servecap capacity` on a simulator whose boundary is known by construction.

The `known-boundary` profile (src/servecap/sim/profiles/known-boundary.toml) puts a 200 ms
serial frontend before a fixed schedule, so its steady P90 TTFT is 300 ms up to c = 21 and
200c - 3,900 ms from c = 22 on: C_max = 24 at the seed's SLOs (TTFT <= 1 s, TPS >= 15),
derived in the profile from its parameters, not measured. Each run searches it with
`capacity` (no users level) and prints the C_max found against 24, the requests sent against
the seed grid's 1,270 (c = 1..64, 10 rounds) and their ratio, and the seconds. Figures vary
with the machine's load: quote them with the date and machine.

    python bench/capacity_known_boundary.py [--runs 3] [--time-scale 10] [--first-look 60]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from servecap.api.capacity.by_load import find_capacity
from servecap.api.capacity.capacity import CapacityOptions
from servecap.api.run.run_config import RunConfig
from servecap.core.config import ClientOptions
from servecap.sim import start_server_process
from servecap.storage.capacity_answer import CapacityAnswer

PROFILE = "known-boundary"
GRID_REQUESTS = 1270
SERIAL_MS, TTFT0_MS, DECODE_MS = 200.0, 100.0, 3900.0  # the profile's T, TTFT0 and D
TTFT_SLO_MS = 1000.0


def computed_cmax() -> int:
    """The largest c whose steady TTFT, c x T - D (saturated) or T + TTFT0, is <= the SLO."""
    def ttft(c: int) -> float:
        return max(SERIAL_MS + TTFT0_MS, c * SERIAL_MS - DECODE_MS)
    return max(c for c in range(1, 200) if ttft(c) <= TTFT_SLO_MS)


def one_run(url: str, out: Path, first_look: int) -> tuple[CapacityAnswer, float]:
    config = RunConfig(client=ClientOptions(base_url=url), out_dir=str(out / "runs"))
    options = CapacityOptions(verify=False, max_time_s=1800, first_look=first_look)
    started = time.monotonic()
    answer = find_capacity(config, options)
    return answer, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--time-scale", type=float, default=10.0)
    parser.add_argument("--first-look", type=int, default=CapacityOptions().first_look)
    args = parser.parse_args()
    expected = computed_cmax()
    server = start_server_process(PROFILE, time_scale=args.time_scale)
    found: list[tuple[CapacityAnswer, float]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(args.runs):
                found.append(one_run(server.base_url, Path(tmp) / str(i), args.first_look))
                a, s = found[-1]
                probes = " ".join(f"{p.concurrency}:{p.verdict} {p.n_requests} sent "
                                  f"{p.n_judged} judged {p.cropped} cropped;"
                                  for p in a.probes)
                print(f"run {i + 1}: C_max {a.c_max} (computed {expected}), {a.requests} "
                      f"requests ({a.requests / GRID_REQUESTS:.2f} of the grid's "
                      f"{GRID_REQUESTS}), {s:.0f} s, {a.status}\n  probes {probes}")
    finally:
        server.stop()
    exact = sum(a.c_max == expected for a, _ in found)
    requests = statistics.median(a.requests for a, _ in found)
    print(f"\n{PROFILE} x{args.time_scale:g}, first look {args.first_look}: C_max exact in "
          f"{exact} of {len(found)}; requests median {requests:.0f} "
          f"({requests / GRID_REQUESTS:.2f} of {GRID_REQUESTS}); seconds median "
          f"{statistics.median(s for _, s in found):.0f}")


if __name__ == "__main__":
    main()
