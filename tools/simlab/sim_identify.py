"""Can three levels tell the simulator's answers apart? Other splits, other starts (issue 20).

Not a test: prints tables. `tools/simlab/sim_holdout.py` fits each seed deployment on c = 1, 8 and
64 and predicts the other four levels; this asks where that held-out error comes from:

    python tools/simlab/sim_identify.py --splits       # other training levels than 1, 8 and 64
                                                # (three, four and five of the seven): is
                                                # it the split or the model?
    python tools/simlab/sim_identify.py --starts       # the held-out fit from other starts: a
                                                # neutral one, and for a hold its two shapes
                                                # (or other knees)
    python tools/simlab/sim_identify.py --starts --only vllm-direct
    python tools/simlab/sim_identify.py --spans        # each parameter the committed held-out fit
                                                # leaves loose, across its fitting range:
                                                # how far the held-out error can move while
                                                # the error on c=1, 8 and 64 does not
    python tools/simlab/sim_identify.py --margin       # sglang-direct's full fit: how far the side
                                                # penalty's margin bounds its worst cell

Each fit is the calibrator's own (`fit_params`, as the profile's refit command runs it: its
header names the seeds and rounds). A start or split whose fit scores as well on the levels
it saw but predicts the others differently is one those levels cannot tell apart.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from seed_bases import seed_bases  # noqa: E402
from sim_holdout import CONFIGS, HOLDOUT_FITS, SEED_CSV, fit_parser, refit_options  # noqa: E402

from servecap.sim.calibration.fitting import (  # noqa: E402
    SloGuard,
    default_free,
    fit_params,
    from_unit,
    side_penalty,
)
from servecap.sim.calibration.identify import loose_parameters  # noqa: E402
from servecap.sim.calibration.measured_levels import read_levels  # noqa: E402
from servecap.sim.model.sweep import fit_errors, sweep_like  # noqa: E402
from servecap.sim.profiles import load_profile, load_profile_file  # noqa: E402

#: training levels tried by --splits: the issue's 1, 8, 64, other threes, fours and a five;
#: 1, 8, 16, 64 adds the level `--recorded` asks sglang-spec for (its eager speculation)
SPLITS: tuple[tuple[int, ...], ...] = (
    (1, 8, 64), (1, 4, 64), (1, 4, 32), (1, 16, 64), (2, 8, 64), (1, 4, 16, 64),
    (1, 8, 16, 64), (1, 2, 8, 32, 64),
)  # fmt: skip


def splits(evals: int, opts: tuple[int | None, int | None], configs: Sequence[str]) -> None:
    """Each seed deployment fitted on each of SPLITS (the calibrator's fit, as the held-out
    fit), predicting the levels it did not see: the error, and the worst cell."""
    print("| deployment | fitted on c= | error on those | predicted: mean / worst (cell) |")
    print("|---|---|---|---|")
    seed = read_levels(SEED_CSV)
    for config in configs:
        base = seed_bases()[config].params
        refit = refit_options(config, *opts)
        for train in SPLITS:
            fitted_on = [r for r in seed[config] if int(r["concurrency"]) in train]
            rest = [r for r in seed[config] if int(r["concurrency"]) not in train]
            params = fit_params(fitted_on, base, default_free(base), max_evals=evals, **refit)[0]
            fit = fit_errors(sweep_like(params, fitted_on), fitted_on)["mape"]
            errs = fit_errors(sweep_like(params, rest), rest)
            worst = max((k for k in errs if k not in ("mape", "max")), key=errs.__getitem__)
            print(f"| {config} | {','.join(map(str, train))} | {fit:.1%} | {errs['mape']:.1%} / "
                  f"{errs['max']:.1%} ({worst}) |", flush=True)  # fmt: skip


#: --starts: a start that knows nothing of the seed's levels (round numbers in each
#: parameter's range; only the ones a deployment fits are used), for every deployment
NEUTRAL_START: dict[str, float] = {
    "frontend_ms": 20.0, "frontend_jitter": 0.5, "frontend_tail_p": 0.1,
    "frontend_tail_ms": 300.0, "step_base_ms": 10.0, "decode_ms_per_seq": 1.0, "decode_exp": 1.0,
    "ctx_ms_per_ktoken": 0.5, "prefill_ms_per_token": 0.05, "prefill_step_ms": 20.0,
    "admit_ratio": 0.05, "admit_interval_ms": 50.0, "admit_hold_steps": 5.0, "acceptance": 0.7,
    "draft_ms": 1.0, "verify_ms_per_token": 0.2, "verify_exp": 1.0, "spec_eager_step_ms": 50.0,
}  # fmt: skip
#: --starts for a deployment with an admission hold: the wait as a long hold at every level
#: (no gate), or as a short hold plus the gate (held requests join once 0.3 x running are due)
HOLD_STARTS: dict[str, dict[str, float]] = {
    "long hold": {"admit_ratio": 0.0, "admit_hold_steps": 20.0},
    "gate": {"admit_ratio": 0.3, "admit_hold_steps": 3.0},
}
#: --starts for a hold with a knee (vllm-direct): the knee at either end of the levels
#: between the fitted c=1 and c=8, and well past them
KNEE_STARTS: dict[str, dict[str, float]] = {
    "knee 2": {"admit_hold_knee": 2.0}, "knee 4": {"admit_hold_knee": 4.0},
    "knee 16": {"admit_hold_knee": 16.0},
}  # fmt: skip


def starts(evals: int, opts: tuple[int | None, int | None], configs: Sequence[str]) -> None:
    """The held-out fit (c=1, 8, 64) from other starting points than the committed one (which
    an earlier fit to all seven levels produced, so it knows the held-out levels): a neutral
    start, and for a deployment with a hold, its two shapes (or other knees, for a hold with
    one). A start whose fit scores better on the three levels but predicts the others worse
    is one they cannot tell apart."""
    print("| deployment | start | loss on c=1,8,64 | error on those | held-out mean / worst "
          "(cell) | TTFT mean at c=2, 4, 16, 32 (seed) |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    seed = read_levels(SEED_CSV)
    for config in configs:
        base = seed_bases()[config].params
        free = default_free(base)
        refit = refit_options(config, *opts)
        named = {"committed": {}, "neutral": {k: v for k, v in NEUTRAL_START.items() if k in free}}
        if "admit_hold_knee" in free:
            named |= KNEE_STARTS
        elif "admit_hold_steps" in free:
            named |= HOLD_STARTS
        train = [r for r in seed[config] if int(r["concurrency"]) in (1, 8, 64)]
        test = [r for r in seed[config] if int(r["concurrency"]) not in (1, 8, 64)]
        for name, update in named.items():
            params, score = fit_params(train, base.model_copy(update=update), free,
                                       max_evals=evals, **refit)  # fmt: skip
            fit = fit_errors(sweep_like(params, train), train)["mape"]
            pred = sweep_like(params, test)
            errs = fit_errors(pred, test)
            worst = max((k for k in errs if k not in ("mape", "max")), key=errs.__getitem__)
            ttft = ", ".join(f"{p['ttft_mean_ms']:.0f} ({t['ttft_mean_ms']:.0f})"
                             for p, t in zip(pred, test, strict=True))  # fmt: skip
            print(f"| {config} | {name} | {score:.4f} | {fit:.1%} | {errs['mape']:.1%} / "
                  f"{errs['max']:.1%} ({worst}) | {ttft} |", flush=True)  # fmt: skip


#: --spans: where in its fitting range (0 = its lower bound, 1 = its upper) a loose
#: parameter is set
SPAN_POINTS = (0.0, 0.25, 0.5, 0.75, 1.0)
#: --spans: a setting "fits c=1, 8 and 64 as well or better" when its mean error there is at
#: most this above the committed held-out fit's (the 10-round sweep's own noise is larger:
#: tools/simlab/sim_holdout.py --noise)
SAME_FIT = 0.005


def spans(configs: Sequence[str]) -> None:
    """Each parameter the committed held-out fit (holdout_fits/, fitted on c=1, 8 and 64)
    leaves loose (``sim.identify``), set across its fitting range with the others kept: the
    error on the three levels, and the held-out error. Among the settings that fit the three
    levels as well as the committed one, the held-out worst cell ranges over what the three
    levels cannot choose between: a bar inside that range is met or missed by where the
    search left the parameter, not by the model."""
    print("| deployment | loose parameter | set to | error on c=1,8,64 | held-out mean / worst "
          "(cell) |")  # fmt: skip
    print("|---|---|---|---|---|")
    seed = read_levels(SEED_CSV)
    for config in configs:
        held = load_profile_file(HOLDOUT_FITS / f"{config}.toml").params
        train = [r for r in seed[config] if int(r["concurrency"]) in (1, 8, 64)]
        test = [r for r in seed[config] if int(r["concurrency"]) not in (1, 8, 64)]
        base_fit = fit_errors(sweep_like(held, train), train)["mape"]
        base_worst = fit_errors(sweep_like(held, test), test)["max"]
        for loose in loose_parameters(held, default_free(seed_bases()[config].params), train):
            worsts = [base_worst]  # the committed setting fits as well as itself
            for u in SPAN_POINTS:
                params = held.model_copy(update={loose.name: from_unit(loose.name, u)})
                fit = fit_errors(sweep_like(params, train), train)["mape"]
                errs = fit_errors(sweep_like(params, test), test)
                cell = max((k for k in errs if k not in ("mape", "max")), key=errs.__getitem__)
                if fit <= base_fit + SAME_FIT:
                    worsts.append(errs["max"])
                print(f"| {config} | {loose.name} | {getattr(params, loose.name):.4g} | "
                      f"{fit:.1%} | {errs['mape']:.1%} / {errs['max']:.1%} ({cell}) |",
                      flush=True)  # fmt: skip
            print(f"| {config} | {loose.name} | the committed and {len(worsts) - 1} of "
                  f"{len(SPAN_POINTS)} fit as well or better | at most "
                  f"{base_fit + SAME_FIT:.1%} | their worst: "
                  f"{min(worsts):.1%} to {max(worsts):.1%} |", flush=True)  # fmt: skip


#: --margin: the prefill costs set across this grid (ms a prefill step, ms a prompt token)
MARGIN_GRID = ([370.0 + 10.0 * i for i in range(12)], [0.03 + 0.005 * i for i in range(9)])


def margins(configs: Sequence[str]) -> None:
    """The committed full fit's prefill costs set across MARGIN_GRID, its other parameters
    kept: for each side-penalty margin, how many points keep every level's P90 on the seed's
    side of the 1 s objective with that room, and the least worst cell among them. With no
    TTFT spread (sglang-direct), c=32's mean must clear the objective by the margin, and
    c=64's follows it up."""
    print("| deployment | margin | grid points on the seed's side | least worst cell (cell) | "
          "its mean error |")  # fmt: skip
    print("|---|---|---|---|---|")
    seed = read_levels(SEED_CSV)
    for config in configs:
        rows, base = seed[config], load_profile(config).params
        preds = [sweep_like(base.model_copy(update={"prefill_step_ms": step,
                                                    "prefill_ms_per_token": per_token}), rows)
                 for step in MARGIN_GRID[0] for per_token in MARGIN_GRID[1]]  # fmt: skip
        for margin in (0.05, 0.025):
            guard = SloGuard(margin=margin)
            kept = [fit_errors(p, rows) for p in preds if side_penalty(p, rows, guard) == 0]
            if not kept:
                print(f"| {config} | {margin:.1%} | 0 of {len(preds)} | | |", flush=True)
                continue
            best = min(kept, key=lambda errs: errs["max"])
            cell = max((k for k in best if k not in ("mape", "max")), key=best.__getitem__)
            print(f"| {config} | {margin:.1%} | {len(kept)} of {len(preds)} | {best['max']:.1%} "
                  f"({cell}) | {best['mape']:.1%} |", flush=True)  # fmt: skip


def main() -> None:
    parser = fit_parser(__doc__)
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--splits", action="store_true", help="other training levels")
    what.add_argument("--starts", action="store_true", help="other starting points")
    what.add_argument("--spans", action="store_true", help="loose parameters' range")
    what.add_argument("--margin", action="store_true", help="the side penalty's margin")
    parser.add_argument("--only", action="append", choices=CONFIGS, help="these deployments")
    args = parser.parse_args()
    opts = (args.seeds, args.fit_rounds)
    if args.splits:
        splits(args.evals, opts, args.only or CONFIGS)
    elif args.spans:
        spans(args.only or CONFIGS)
    elif args.margin:
        margins(args.only or ["sglang-direct"])
    else:
        starts(args.evals, opts, args.only or CONFIGS)


if __name__ == "__main__":
    main()
