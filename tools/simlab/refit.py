"""The seed lab's refit: ``python tools/simlab/refit.py --seed-csv CSV --out-dir DIR``
fits the four seed deployments (``seed_bases``) to the seed report's levels and writes
each profile and its held-out fit. Not installed with servecap: the shipped seed profiles
are data, and their headers name the command that made them.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from seed_bases import seed_bases
from seed_prompts import seed_prompt_tokens

from servecap.sim.calibration.calibrate import (
    fit_with_holdout,
    make_writable_folder,
    write_profile,
)
from servecap.sim.calibration.fitting import SLO_MARGIN, SloGuard
from servecap.sim.calibration.holdout import HeldOut
from servecap.sim.calibration.measured_levels import (
    CalibrationInputError,
    read_levels,
)
from servecap.sim.profiles import Profile

SEED_COMMAND = (
    "python tools/simlab/refit.py --seed-csv tests/data/kimi-k3-b300-appendix-a.csv "
    "--out-dir src/servecap/sim/profiles --holdout-dir tools/simlab/holdout_fits"
)
#: the committed seed profiles were fitted with one pass (and --evals 200); their headers'
#: command reproduces them as they are
SEED_RESTARTS = 1


def holdout_profile(profile: Profile, held: HeldOut) -> Profile:
    """The held-out fit as a profile of its own (what ``holdout_*`` errors were measured on)."""
    train = ",".join(str(int(r["concurrency"])) for r in held.train)
    calibration: dict[str, str | float] = {
        "holdout_of": profile.name,
        "fitted_on": f"c={train} only",
        "holdout_split": held.split,
        **{k: v for k, v in profile.calibration.items() if k.startswith("holdout_")},
    }
    return profile.model_copy(
        update={"name": f"{profile.name}-holdout", "params": held.params,
                "calibration": calibration}
    )  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """``python tools/simlab/refit.py --seed-csv CSV --out-dir DIR``: the seed profiles."""
    ap = argparse.ArgumentParser(prog="python tools/simlab/refit.py")
    ap.add_argument("--seed-csv", required=True)
    ap.add_argument("--out-dir", required=True)
    ap.add_argument("--only", action="append", default=None, help="config name (repeatable)")
    ap.add_argument("--evals", type=int, default=200, help="evaluations per search phase")
    ap.add_argument("--seeds", type=int, default=1, help="seeded sweeps averaged per loss")
    ap.add_argument("--rounds", type=int, default=5, help="rounds per level of each sweep")
    margin = "how far from the 1 s TTFT objective, on its side, a P90 must stay (a fraction)"
    ap.add_argument("--slo-margin", type=float, default=SLO_MARGIN, help=margin)
    lengths = "sweep the seed tool's own prompts (seed_prompts.py), in this shuffled order"
    ap.add_argument("--seed-prompts", type=int, default=None, metavar="ORDER", help=lengths)
    where = "where the held-out fits go (the seed's: tools/simlab/holdout_fits)"
    ap.add_argument("--holdout-dir", required=True, help=where)
    args = ap.parse_args(argv)
    holdout_dir = Path(args.holdout_dir)
    # bad input fails here, in one line, not after minutes of fitting
    unknown = sorted(set(args.only or ()) - set(seed_bases()))
    if unknown:
        ap.exit(
            2,
            f"{ap.prog}: error: --only {', '.join(unknown)}: not a seed deployment "
            f"(one of {', '.join(seed_bases())})\n",
        )
    if not 0.0 <= args.slo_margin < 1.0:
        ap.exit(2, f"{ap.prog}: error: --slo-margin {args.slo_margin}: not in [0, 1)\n")
    try:
        levels = read_levels(args.seed_csv)
        for folder in (Path(args.out_dir), holdout_dir):
            make_writable_folder(folder)
    except CalibrationInputError as exc:
        ap.exit(2, f"{ap.prog}: error: {exc}\n")
    except OSError as exc:
        ap.exit(2, f"{ap.prog}: error: cannot write profiles to {exc.filename}: {exc.strerror}\n")
    how = seed_command(args)
    prompts = () if args.seed_prompts is None else seed_prompt_tokens(args.seed_prompts)
    for config, base in seed_bases().items():
        if (args.only and config not in args.only) or config not in levels:
            continue
        t0 = time.monotonic()
        profile, held = fit_with_holdout(
            levels[config],
            base,
            source=Path(args.seed_csv).name,
            max_evals=args.evals,
            restarts=SEED_RESTARTS,
            seeds=args.seeds,
            rounds=args.rounds,
            prompt_lengths=prompts,
            guard=SloGuard(margin=args.slo_margin),
        )
        write_profile(profile, Path(args.out_dir) / f"{config}.toml", how)
        if held is not None:
            write_profile(holdout_profile(profile, held), holdout_dir / f"{config}.toml", how)
        cal = profile.calibration
        print(
            f"{config}: fit mape {cal['mape']:.3f} max {cal['max_cell_error']:.3f}; "
            f"held-out mape {cal.get('holdout_mape', 'n/a')} "
            f"max {cal.get('holdout_max_cell_error', 'n/a')} ({time.monotonic() - t0:.0f} s)"
        )
    return 0


def seed_command(args: argparse.Namespace) -> str:
    """The seed refit command with the options that shaped this fit (a profile's header
    says how to make it again; where the files were written does not change them)."""
    shaping = [f"--only {name}" for name in args.only or []]
    shaping += [f"--{flag} {value}" for flag, value, default in (
        ("evals", args.evals, 200), ("seeds", args.seeds, 1), ("rounds", args.rounds, 5),
        ("seed-prompts", args.seed_prompts, None), ("slo-margin", args.slo_margin, SLO_MARGIN),
    ) if value != default]  # fmt: skip
    return " ".join([SEED_COMMAND, *shaping])


if __name__ == "__main__":
    raise SystemExit(main())
