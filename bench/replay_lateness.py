"""Send lateness of a trace replay: the Azure 2023 conversation trace's first `--seconds`
replayed at 1x against the simulator's deterministic profile, as `servecap run --trace`
runs it (its own process), with the lateness the client's idle loop itself shows beside it.

Not a test: it prints figures. The send lateness of a row is `sent_at - scheduled_at`; the
loop's lag is how late the client's own idle event loop woke over the same level (the floor
the machine puts under every send). Their difference is the scheduler's own share. Usage::

    python bench/replay_lateness.py [--seconds 120] [--runs 2]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
from pathlib import Path

from servecap.sim import start_server_process

AZURE = Path(__file__).resolve().parents[1] / "tests" / "data" / "traces" / \
    "azure-llm-2023-conv-head2000.csv"
FIELDS = ("n_ok", "send_lateness_mean_ms", "send_lateness_p99_ms", "send_lateness_max_ms",
          "loop_lag_p99_ms")


def replay_once(seconds: float) -> dict[str, float]:
    """One replay in its own `servecap run`; the level's summary fields above."""
    with tempfile.TemporaryDirectory() as out, start_server_process("deterministic") as sim:
        done = subprocess.run(
            ["servecap", "run", "--base-url", sim.base_url, "--out", out, "--trace",
             str(AZURE), "--trace-duration", str(seconds), "--warmup", "0"],
            capture_output=True, text=True, timeout=seconds * 5 + 120, check=False)
        if done.returncode != 0:
            raise SystemExit(done.stderr[-2000:])
        (run_dir,) = [p for p in Path(out).iterdir() if p.is_dir()]
        (level,) = json.loads((run_dir / "summary.json").read_text())
    return {name: float(level[name]) for name in FIELDS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    print(f"Azure 2023 conversations, first {args.seconds:g} s at 1x, deterministic sim")
    print(f"{'run':>3} {'rows':>6} {'late mean':>10} {'late p99':>9} {'late max':>9} "
          f"{'loop lag p99':>13} {'p99 - lag':>10}")
    for run in range(1, args.runs + 1):
        f = replay_once(args.seconds)
        own = f["send_lateness_p99_ms"] - f["loop_lag_p99_ms"]
        print(f"{run:>3} {f['n_ok']:>6.0f} {f['send_lateness_mean_ms']:>9.2f}ms "
              f"{f['send_lateness_p99_ms']:>7.2f}ms {f['send_lateness_max_ms']:>7.2f}ms "
              f"{f['loop_lag_p99_ms']:>11.2f}ms {own:>8.2f}ms")


if __name__ == "__main__":
    main()
