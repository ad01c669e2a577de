"""The simulator's held-out error: fit on some levels, predict the others (issue 20).

Not a test: prints tables. For each seed deployment (the seed report's Appendix A,
tests/data/kimi-k3-b300-appendix-a.csv) the calibrator's own fit sees c = 1, 8 and 64 only,
and the profile it makes predicts c = 2, 4, 16 and 32:

    python tools/simlab/sim_holdout.py                 # virtual time (the pure closed-loop sweep)
    python tools/simlab/sim_holdout.py --only sglang-direct    # one deployment's row (fitted as
                                                # its profile's refit command says)
    python tools/simlab/sim_holdout.py --client        # also through the user's path: the fitted
                                                # profile served by `servecap sim`, swept at
                                                # the held-out levels by `servecap run`
    python tools/simlab/sim_holdout.py --train 1,8,16,64 --only sglang-spec
                                                # fitted on the levels a user measures once
                                                # the calibrator names one (c=16 here)
    python tools/simlab/sim_holdout.py --recorded      # what the committed profiles' [calibration]
                                                # tables say (instant)
    python tools/simlab/sim_holdout.py --cmax          # each committed seed profile swept with 10
                                                # rounds through `servecap run` + plan: its
                                                # P90 C_max against the seed's
    python tools/simlab/sim_holdout.py --cmax --repeat 12 --only sglang-spec
                                                # its c=1..8 through `servecap run`, 12
                                                # times, each on a fresh server
    python tools/simlab/sim_holdout.py --seed-prompts 3  # the held-out fit swept with the
                                                # prompts the seed's tool really sent (54-166
                                                # tokens, not 128), in 3 shuffled orders
    python tools/simlab/sim_holdout.py --noise         # the floor: a perfect model (the committed
                                                # profile's expectation) scored against
                                                # one 10-round draw of itself
    python tools/simlab/sim_holdout.py --engine        # the llama-server proof (tests/engines),
                                                # and the same runs calibrated on two
                                                # workloads (128/128 + 512/32 at c=1), and
                                                # from llama.cpp's base

Where the held-out error comes from (other splits, other starts): tools/simlab/sim_identify.py.

Errors are mean absolute relative errors over cells (level x TTFT, ITL, TPS and latency
means); "worst" is the largest cell. Numbers measured on a loaded machine say so.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from seed_bases import seed_bases  # noqa: E402
from seed_prompts import seed_prompt_tokens  # noqa: E402

from servecap.kinds.registry import kind_of  # noqa: E402
from servecap.sim.calibration.fitting import SLO_MARGIN, SloGuard, default_free, fit_params  # noqa: E402
from servecap.sim.calibration.holdout import HeldOut, holdout  # noqa: E402
from servecap.sim.calibration.identify import levels_to_measure, loose_parameters  # noqa: E402
from servecap.sim.calibration.measured_levels import read_levels  # noqa: E402
from servecap.sim.model.params import ModelParams  # noqa: E402
from servecap.sim.model.sweep import (  # noqa: E402
    TAIL_METRICS,
    closed_loop_sweep,
    fit_errors,
)
from servecap.sim.profiles import load_profile, load_profile_file  # noqa: E402

SEED_CSV = ROOT / "tests" / "data" / "kimi-k3-b300-appendix-a.csv"
PROFILES = ROOT / "src" / "servecap" / "sim" / "profiles"
HOLDOUT_FITS = Path(__file__).resolve().parent / "holdout_fits"
CONFIGS = ("vllm-direct", "vllm-spec", "sglang-direct", "sglang-spec")
SEED_CMAX = {"vllm-direct": 32, "vllm-spec": 32, "sglang-direct": 16, "sglang-spec": 2}


def refit_options(config: str, seeds: int | None, rounds: int | None) -> dict[str, Any]:
    """``fit_params``'s seeded sweeps per loss, rounds per sweep and SLO margin as in
    ``config``'s committed refit (its profile's header names the command), seeds and rounds
    unless given: the held-out fit here is then the one the profile records. Fitting to one
    5-round draw overfits that draw's noise."""
    text = (PROFILES / f"{config}.toml").read_text()
    command = re.search(r"^# Produced by the calibrator.*$", text, re.MULTILINE)
    if command is None:  # a profile typed in by hand has no refit command to follow
        raise SystemExit(f"{config}.toml does not name the command that produced it")
    found = {k: int(v) for k, v in re.findall(r"--(seeds|rounds) (\d+)", command.group())}
    margin = re.search(r"--slo-margin ([0-9.]+)", command.group())
    return {"seeds": seeds or found.get("seeds", 1), "rounds": rounds or found.get("rounds", 5),
            "guard": SloGuard(margin=float(margin.group(1)) if margin else SLO_MARGIN)}  # fmt: skip


def _held_out(
    config: str,
    evals: int,
    opts: tuple[int | None, int | None],
    prompts: Sequence[int] = (),
    train: Sequence[int] | None = None,
) -> HeldOut:
    base = seed_bases()[config].params
    free = default_free(base)
    refit = refit_options(config, *opts)

    def fit_fn(rows: list[dict[str, float]]) -> Any:
        return fit_params(rows, base, free, max_evals=evals, prompt_lengths=prompts, **refit)[0]

    held = holdout(read_levels(SEED_CSV)[config], fit_fn, prompts, train)
    assert held is not None
    return held


def _through_client(held: HeldOut, config: str, tmp: Path) -> dict[str, float]:
    """Serve the held-out fit with `servecap sim`, sweep its test levels, compare."""
    from servecap.api.run.run import Secrets, run_benchmark
    from servecap.api.run.run_config import RunConfig
    from servecap.core.config import ClientOptions
    from servecap.sim.calibration.calibrate import write_profile
    from servecap.sim.server.runner import start_server_process
    from servecap.storage.runs import load_runs

    prof = seed_bases()[config].model_copy(update={"params": held.params})
    path = tmp / f"{config}-holdout.toml"
    write_profile(prof, path, f"tools/simlab/sim_holdout.py ({held.split})")
    levels = [int(r["concurrency"]) for r in held.target]
    with start_server_process(str(path)) as server:
        config_ = RunConfig(name=f"{config}-holdout", concurrency=levels, rounds=10,
                            out_dir=str(tmp / "runs"),
                            client=ClientOptions(base_url=server.base_url))  # fmt: skip
        outcome = run_benchmark(config_, Secrets())
    (run,) = load_runs([outcome.run_dir])
    rows = [lv.model_dump() for lv in run.levels]
    return fit_errors(rows, held.target)


def _row(config: str, fit: float, held: dict[str, float], client: dict[str, float] | None) -> str:
    line = f"| {config} | {fit:.1%} | {held['mape']:.1%} | {held['max']:.1%} |"
    if client is not None:
        line += f" {client['mape']:.1%} / {client['max']:.1%} |"
    return line


def _loose(config: str, params: ModelParams, train: list[dict[str, float]]) -> str:
    """The held-out fit's parameters its three levels leave loose, and where to measure."""
    free = default_free(seed_bases()[config].params)
    loose = loose_parameters(params, free, train)
    if not loose:
        return "none"
    names = ", ".join(item.name for item in loose)
    return f"{names} (measure {', '.join(levels_to_measure(loose))})"


def virtual_and_client(
    evals: int, opts: tuple[int | None, int | None], client: bool, configs: Sequence[str],
    train: Sequence[int] | None = None,
) -> None:  # fmt: skip
    """The held-out table: each deployment fitted on ``train`` (default c=1,8,64), its other
    levels predicted, in virtual time and (``client``) through the user's path."""
    on = ",".join(map(str, train or (1, 8, 64)))
    head = f"| deployment | fit error on c={on} | held-out mean | held-out worst |"
    print(
        head
        + (" through the user's path: mean / worst |" if client else "")
        + f" loose on c={on} |"
    )
    print("|---|---|---|---|" + ("---|" if client else "") + "---|")
    with tempfile.TemporaryDirectory(prefix="sim-holdout-") as tmp:
        for config in configs:
            t0 = time.monotonic()
            held = _held_out(config, evals, opts, train=train)
            levels = [int(row["concurrency"]) for row in held.train]
            fit = fit_errors(closed_loop_sweep(held.params, levels), held.train)["mape"]
            errs = fit_errors(held.pred, held.target)
            via = _through_client(held, config, Path(tmp)) if client else None
            print(_row(config, fit, errs, via) + f" {_loose(config, held.params, held.train)} |"
                  f"  ({time.monotonic() - t0:.0f} s)", flush=True)  # fmt: skip


def seed_prompts(
    evals: int, opts: tuple[int | None, int | None], orders: int, configs: Sequence[str]
) -> None:
    """The held-out table swept as the seed report's tool sent its "128/128": its own 100
    prompts (54-166 tokens, tools/simlab/seed_prompts.py) in ``orders`` shuffled orders, beside the
    128-token prompts the committed profiles are fitted to."""
    head = " | ".join(f"order {k}" for k in range(orders))
    print(f"| deployment | 128-token prompts | seed prompts: {head} | mean over orders |")
    print("|---|---|" + "---|" * (orders + 1))
    for config in configs:
        cells = [fit_errors((h := _held_out(config, evals, opts)).pred, h.target)]
        for order in range(orders):
            held = _held_out(config, evals, opts, seed_prompt_tokens(order))
            cells.append(fit_errors(held.pred, held.target))
        text = [f"{e['mape']:.1%} / {e['max']:.1%}" for e in cells]
        avg = np.mean([e["mape"] for e in cells[1:]]), np.mean([e["max"] for e in cells[1:]])
        print(f"| {config} | {' | '.join(text)} | {avg[0]:.1%} / {avg[1]:.1%} |", flush=True)


def noise(draws: int, configs: Sequence[str]) -> None:
    """What a perfect model would score on the held-out levels: the committed profile's
    expectation (the mean of ``draws`` seeded 10-round sweeps) against each draw in turn, as
    if that draw were the seed report. The seed is one such draw of its servers, so this is
    the error no model can go below (as far as the profile's own randomness is the servers')."""
    test = [2, 4, 16, 32]
    print(f"| deployment | mean error: median / max over {draws} draws | worst cell: median / "
          "P90 / max | P90 TTFT worst cell: median / max |")  # fmt: skip
    print("|---|---|---|---|")
    for config in configs:
        params = load_profile(config).params
        runs = [closed_loop_sweep(params, test, 10, seed=s) for s in range(draws)]
        expected = [{k: float(np.mean([run[i][k] for run in runs])) for k in row}
                    for i, row in enumerate(runs[0])]  # fmt: skip
        means = [fit_errors(expected, run) for run in runs]
        tails = [fit_errors(expected, run, TAIL_METRICS)["max"] for run in runs]
        mape, worst = np.array([e["mape"] for e in means]), np.array([e["max"] for e in means])
        print(f"| {config} | {np.median(mape):.1%} / {mape.max():.1%} | {np.median(worst):.1%} / "
              f"{np.quantile(worst, 0.9):.1%} / {worst.max():.1%} | {np.median(tails):.1%} / "
              f"{max(tails):.1%} |", flush=True)  # fmt: skip


def recorded() -> None:
    """The committed profiles' errors, and what the committed held-out fits' three levels
    leave loose (seconds; no refit)."""
    print("| profile | fit mean / worst (7 levels) | held-out split | held-out mean / worst "
          "| loose on c=1,8,64 |")  # fmt: skip
    print("|---|---|---|---|---|")
    seed = read_levels(SEED_CSV)
    for config in CONFIGS:
        cal = load_profile(config).calibration
        params = load_profile_file(HOLDOUT_FITS / f"{config}.toml").params
        train = [r for r in seed[config] if int(r["concurrency"]) in (1, 8, 64)]
        loose = _loose(config, params, train)
        print(f"| {config} | {float(cal['mape']):.1%} / {float(cal['max_cell_error']):.1%} | "
              f"{cal.get('holdout_split')} | {float(cal['holdout_mape']):.1%} / "
              f"{float(cal['holdout_max_cell_error']):.1%} | {loose} |")  # fmt: skip


def cmax_through_client(rounds: int) -> None:
    """The demo's path: every seed profile swept side by side at x1, then plan (P90)."""
    from servecap.api.demo import DemoOptions, run_demo

    with tempfile.TemporaryDirectory(prefix="sim-cmax-") as tmp:
        t0 = time.monotonic()
        result = run_demo(Path(tmp), DemoOptions(rounds=rounds, verify_s=0.0))
        print(f"{rounds}-round sweeps through servecap run, plan at P90 TTFT <= 1 s, TPS >= 15 "
              f"({time.monotonic() - t0:.0f} s):")  # fmt: skip
        for run in result.plan.runs:
            print(f"  {run.name}: C_max {run.c_max} (seed {SEED_CMAX.get(run.name)}), "
                  f"users {run.users}")  # fmt: skip


def cmax_repeated(repeats: int, rounds: int, configs: Sequence[str]) -> None:
    """The demo's server (`servecap sim`, its fixed seed) swept through `servecap run` at c =
    1, 2, 4 and 8, `repeats` times, fresh each time: how often the client's timing moves a
    C_max that depends on those levels (sglang-spec's), and each repeat's P90 TTFT."""
    from servecap.api.run.run import Secrets, run_benchmark
    from servecap.api.run.run_config import RunConfig
    from servecap.core.config import SLO, ClientOptions
    from servecap.sim.server.runner import start_server_process
    from servecap.stats.capacity import plan_levels
    from servecap.storage.runs import load_runs

    for config in configs:
        got = []
        with tempfile.TemporaryDirectory(prefix="sim-cmax-") as tmp:
            for k in range(repeats):
                with start_server_process(config) as server:
                    client = ClientOptions(base_url=server.base_url)
                    run_config = RunConfig(name=f"{config}-{k}", concurrency=[1, 2, 4, 8],
                                           rounds=rounds, out_dir=str(Path(tmp) / "runs"),
                                           client=client)  # fmt: skip
                    (run,) = load_runs([run_benchmark(run_config, Secrets()).run_dir])
                got.append(plan_levels(run.levels, SLO(), kind_of).c_max)
                p90 = [round(lv.value("ttft", "p90") or 0) for lv in run.levels]
                print(f"  {config} repeat {k + 1}: C_max {got[-1]}, P90 TTFT ms {p90}", flush=True)
        hits = sum(c == SEED_CMAX[config] for c in got)
        print(f"{config}: the seed's C_max {SEED_CMAX[config]} in {hits} of {repeats} "
              f"({rounds} rounds at c = 1, 2, 4, 8 through servecap run at x1)")  # fmt: skip


def engine() -> None:
    from tests.engines import procs, sim_proof
    from tests.engines.tinymodel import ensure_model

    binary = procs.llama_server_binary(build=True)
    assert binary is not None
    with tempfile.TemporaryDirectory(prefix="sim-proof-") as tmp:
        proof = sim_proof.run_proof(binary, ensure_model().gguf, Path(tmp))
        print(sim_proof.table(proof))
        print(
            "\nwhat a second workload in the calibration buys (same measurements; mean error"
            " over what neither profile saw):"
        )
        print(f"{'group':<24} {'128/128 only':>13} {'+ 512/32 c=1':>13}")
        for group, one, both in sim_proof.two_workloads(proof, Path(tmp)):
            print(f"{group:<24} {one:>13.1%} {both:>13.1%}")
        for name in ("llama-tiny", "llama-tiny-two"):
            params = load_profile(str(Path(tmp) / f"{name}.toml")).params
            print(
                f"{name}: a prompt costs {params.prefill_step_ms:.1f} ms a step + "
                f"{params.prefill_ms_per_token:.3f} ms a token"
            )
        print(
            "\nthe generic base beside llama.cpp's (`--engine llama.cpp`, the proof's), fitted "
            "to the same calibration run (mean error):"
        )
        print(f"{'group':<24} {'llama.cpp':>13} {'generic':>13}")
        for group, llama, generic in sim_proof.generic_base(proof, Path(tmp)):
            print(f"{group:<24} {llama:>13.1%} {generic:>13.1%}")


def fit_parser(doc: str | None) -> argparse.ArgumentParser:
    """A parser with the held-out fit's options (evaluations, seeds and rounds per loss)."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--evals", type=int, default=200, help="as the seed refit command")
    refit = "default: as the profile's refit command (its header)"
    parser.add_argument("--seeds", type=int, default=None, help=f"seeded sweeps per loss; {refit}")
    parser.add_argument("--fit-rounds", type=int, default=None, help=f"rounds per sweep; {refit}")
    return parser


def main() -> None:
    parser = fit_parser(__doc__)
    parser.add_argument("--client", action="store_true")
    parser.add_argument("--recorded", action="store_true")
    parser.add_argument("--cmax", action="store_true")
    parser.add_argument("--rounds", type=int, default=10, help="--cmax rounds")
    parser.add_argument(
        "--repeat",
        type=int,
        default=0,
        help="--cmax: this many sweeps of "
        "c=1..8 per --only profile instead, each on a fresh server",
    )
    parser.add_argument("--engine", action="store_true")
    parser.add_argument("--noise", action="store_true")
    parser.add_argument("--draws", type=int, default=30, help="--noise draws")
    orders = "the held-out table with the seed tool's own prompts, in this many orders"
    parser.add_argument("--seed-prompts", type=int, default=0, metavar="ORDERS", help=orders)
    train = "the held-out table fitted on these levels instead of 1,8,64 (e.g. 1,8,16,64)"
    parser.add_argument("--train", default=None, metavar="LEVELS", help=train)
    only = "rows of the held-out table, --noise, --seed-prompts"
    parser.add_argument("--only", action="append", choices=CONFIGS, help=only)
    args = parser.parse_args()
    opts = (args.seeds, args.fit_rounds)
    if args.recorded:
        recorded()
    elif args.seed_prompts:
        seed_prompts(args.evals, opts, args.seed_prompts, args.only or CONFIGS)
    elif args.noise:
        noise(args.draws, args.only or CONFIGS)
    elif args.cmax and args.repeat:
        cmax_repeated(args.repeat, args.rounds, args.only or ["sglang-spec"])
    elif args.cmax:
        cmax_through_client(args.rounds)
    elif args.engine:
        engine()
    else:
        levels = [int(c) for c in args.train.split(",")] if args.train else None
        virtual_and_client(args.evals, opts, args.client, args.only or CONFIGS, levels)


if __name__ == "__main__":
    main()
