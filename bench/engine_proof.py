"""The simulator calibrated on llama-server, beside what the engine then measured: a dated
validation record, not a test.

Measures llama-server (the tiny test model, 8 slots) at c = 1, 4, 8 (128/128), calibrates a
profile on them (`servecap sim calibrate --engine llama.cpp`), then measures what the
profile never saw (c = 2, 6, 16; 512/32 at c = 1, 4; 16 users thinking between requests),
the engine's c=1 again between the groups (its drift) and the calibration levels again at
the end (its repeat error), and compares each with `servecap sim predict`'s answer
(tests/engines/sim_proof.py). The result is appended to docs/validation/engine-proof.md
with the date and the machine; nothing is judged here::

    python bench/engine_proof.py                  # build llama-server if needed, run, record
    python bench/engine_proof.py --print-only     # run and print, write nothing
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.engines import procs, sim_proof  # noqa: E402
from tests.engines.tinymodel import ensure_model  # noqa: E402

RECORD = ROOT / "docs" / "validation" / "engine-proof.md"


def machine() -> str:
    """The machine the figures were measured on, in one line."""
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return f"{platform.machine()}, {os.cpu_count()} CPUs, load average {load} at the end"


def group_lines(proof: sim_proof.Proof) -> list[str]:
    """Each group's mean and worst error, and the engine's own repeat error and drift."""
    lines = []
    for workload in dict.fromkeys(c.workload for c in proof.cells):
        worst = proof.worst(workload)
        lines.append(f"| {workload} | {proof.mean_error(workload):.1%} | {worst.error:.1%} "
                     f"(c={worst.concurrency} {worst.metric}) | {proof.drift(workload):.1%} |")
    return lines


def record(proof: sim_proof.Proof, binary: Path) -> str:
    """The dated section appended to the record."""
    cal = proof.profile.calibration
    head = [
        f"## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "",
        f"llama-server `{binary}`; {machine()}; the proof took {proof.wall_s:.0f} s.",
        f"Calibrated on c={','.join(map(str, sim_proof.CAL_LEVELS))} (128/128): fit error "
        f"{float(cal['mape']):.1%}, held-out {float(cal.get('holdout_mape', 'nan')):.1%} "
        f"({cal.get('holdout_split', 'none')}); loose: {cal.get('loose', 'none')}.",
        "",
        "| group | mean error | worst cell | engine drift beside it |",
        "|---|---|---|---|",
        *group_lines(proof),
        "",
        "```",
        sim_proof.table(proof),
        "```",
        "",
    ]
    return "\n".join(head)


def main() -> int:
    ap = argparse.ArgumentParser(prog="python bench/engine_proof.py")
    ap.add_argument("--print-only", action="store_true", help="print the record, write nothing")
    args = ap.parse_args()
    binary = procs.llama_server_binary(build=True)
    if binary is None:
        ap.exit(2, "error: no llama-server (scripts/build_llama_server.sh builds it)\n")
    with tempfile.TemporaryDirectory(prefix="engine-proof-") as tmp:
        proof = sim_proof.run_proof(binary, ensure_model().gguf, Path(tmp))
        text = record(proof, binary)
    print(text)
    if not args.print_only:
        with RECORD.open("a", encoding="utf-8") as out:
            out.write("\n" + text)
        print(f"appended to {RECORD.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
