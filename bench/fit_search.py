"""How often the calibrator's search stalls: one Nelder-Mead pass against `RESTARTS`.

Not a test: prints a table. The input is what CI measured on llama-server
(tests/data/llama-server-ci-levels.csv, the levels one pass fitted to 32%), and copies of it
with every level's four means moved by a seeded lognormal factor (``--spread``, 6% by
default), as another run of the same engine might read. Each is fitted as `servecap sim
calibrate` fits a generic engine (8 slots, the GENERIC_FREE parameters) with one pass and
with ``calibrate.RESTARTS``, and each fit's error on its own levels is printed side by side:

    python bench/fit_search.py                  # 12 inputs, about a minute
    python bench/fit_search.py --copies 20 --spread 0.12
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from servecap.sim import read_levels  # noqa: E402
from servecap.sim.calibration.bases import GENERIC_FREE, generic_base  # noqa: E402
from servecap.sim.calibration.calibrate import RESTARTS, fit  # noqa: E402
from servecap.sim.model.sweep import METRICS, fit_errors, sweep_like  # noqa: E402

CI_LEVELS = ROOT / "tests" / "data" / "llama-server-ci-levels.csv"
SLOTS, KV_TOKENS = 8, 8192  # the proof's llama-server: -np 8, 1024 tokens a slot


def perturbed(levels: list[dict[str, float]], spread: float, seed: int) -> list[dict[str, float]]:
    """``levels`` with each mean of each level scaled by exp(N(0, spread))."""
    rng = np.random.default_rng(seed)
    return [{k: v * float(np.exp(rng.normal(0.0, spread))) if k in METRICS else v
             for k, v in row.items()} for row in levels]  # fmt: skip


def fit_error(levels: list[dict[str, float]], restarts: int) -> float:
    """The fit's mean error on the levels it was fitted to (10-round virtual-time sweep)."""
    profile = fit(levels, generic_base(SLOTS, KV_TOKENS), free=list(GENERIC_FREE),
                  restarts=restarts, with_holdout=False)  # fmt: skip
    return fit_errors(sweep_like(profile.params, levels), levels)["mape"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--copies", type=int, default=11, help="perturbed copies of the CI levels")
    ap.add_argument("--spread", type=float, default=0.06, help="lognormal sigma per mean")
    args = ap.parse_args()
    measured = read_levels(CI_LEVELS)["llama-tiny"]
    inputs = [("CI levels", measured)] + [
        (f"copy {i + 1}", perturbed(measured, args.spread, seed=i)) for i in range(args.copies)
    ]
    errors: dict[int, list[float]] = {1: [], RESTARTS: []}
    print(f"| input | one pass | {RESTARTS} passes |\n|---|---|---|")
    started = time.monotonic()
    for name, levels in inputs:
        row = [fit_error(levels, passes) for passes in errors]
        for passes, err in zip(errors, row, strict=True):
            errors[passes].append(err)
        print(f"| {name} | {row[0]:.1%} | {row[1]:.1%} |", flush=True)
    for passes, errs in errors.items():
        print(f"{passes} pass(es): median {np.median(errs):.1%}, worst {max(errs):.1%}, "
              f"over 25%: {sum(e > 0.25 for e in errs)} of {len(errs)}")  # fmt: skip
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
