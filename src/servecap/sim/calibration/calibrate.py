"""Calibrate a profile to measured level means (``measured_levels`` reads them).

Each level is fitted at its own workload (the prompt and output tokens it was measured
with); levels of several workloads (two runs, say) make one fit, which is how a profile
learns a prompt's fixed cost apart from its cost per token. The fit keeps each level's P90
TTFT on its measured side of the TTFT objective C_max will be asked at (``fitting.SloGuard``;
``slo_ttft_ms`` in the profile).

Every fit also reports a held-out error (``holdout``): fitted on part of the levels, how far
off the others come out. Both go into the profile's ``[calibration]`` table, with the names
of the fitted parameters and of those set from the deployment, and, where the measured levels
leave some fitted parameter loose (``identify``: it moves a level between them, not the
measured ones), which ones and the levels that would pin them down (``loose``,
``measure_next``).

The seed profiles shipped with servecap were fitted by the seed lab, which is not installed
(``tools/simlab/refit.py``; each profile's header names its command).
"""

from __future__ import annotations

import errno
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from servecap.sim.calibration.fitting import (
    SLO_TTFT_MS,
    SloGuard,
    default_free,
    fit_params,
)
from servecap.sim.calibration.holdout import (
    FitFn,
    HeldOut,
    error_table,
    holdout,
    leave_one_out,
)
from servecap.sim.calibration.identify import levels_to_measure, loose_parameters
from servecap.sim.calibration.measured_levels import (
    CalibrationInputError,
    describe_workloads,
)
from servecap.sim.model.params import ModelParams
from servecap.sim.model.sweep import sweep_like
from servecap.sim.profiles import Profile, profile_from_dict
from servecap.sim.profiles.tomlout import profile_to_toml

#: measures a held-out error: (levels, fit, prompt lengths) -> the held-out fit, or None
HeldOutFn = Callable[[list[dict[str, float]], FitFn, Sequence[int]], HeldOut | None]
#: Nelder-Mead passes, each restarted from the last one's best with a smaller simplex: one
#: pass can stall far from the optimum on this rough objective (bench/fit_search.py)
RESTARTS = 3


def guarded_ttft_ms(calibration: Mapping[str, Any]) -> float | None:
    """The TTFT objective (ms) a profile's fit kept each P90 on the measured side of: its
    ``slo_ttft_ms``, else the 1 s every fit guarded before that was written down; None for
    a profile no fit produced."""
    value = calibration.get("slo_ttft_ms")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return SLO_TTFT_MS if "mape" in calibration else None


def fit(
    levels: list[dict[str, float]],
    base: Profile,
    free: Sequence[str] | None = None,
    name: str | None = None,
    source: str = "",
    max_evals: int = 120,
    restarts: int = RESTARTS,
    seeds: int = 1,
    with_holdout: bool = True,
    rounds: int = 5,
    guard: SloGuard = SloGuard(),
) -> Profile:
    """A profile like ``base`` with its parameters fitted to ``levels`` (each at its own
    workload), its ``[calibration]`` table holding the fit error and (``with_holdout``) the
    held-out error, each inner level predicted by a fit on the others
    (``holdout.leave_one_out``); ``guard``: the TTFT objective the fit keeps each P90 on the
    measured side of."""
    return fit_with_holdout(
        levels, base, free, name, source, with_holdout, max_evals=max_evals, restarts=restarts,
        seeds=seeds, rounds=rounds, guard=guard, held_out=leave_one_out,
    )[0]  # fmt: skip


def fit_with_holdout(
    levels: list[dict[str, float]],
    base: Profile,
    free: Sequence[str] | None = None,
    name: str | None = None,
    source: str = "",
    with_holdout: bool = True,
    max_evals: int = 120,
    restarts: int = RESTARTS,
    seeds: int = 1,
    rounds: int = 5,
    prompt_lengths: Sequence[int] = (),
    guard: SloGuard = SloGuard(),
    held_out: HeldOutFn = holdout,
) -> tuple[Profile, HeldOut | None]:
    """``fit``, and the held-out fit itself (its parameters, fitted on the train levels).
    ``prompt_lengths``: the prompts the 128/128 levels really sent (see ``sweep_like``);
    ``guard``: the loss's side penalty (``fitting.side_penalty``); ``held_out``: how the
    held-out error is measured (one split by default, as the seed profiles were)."""
    if not levels:
        raise CalibrationInputError("nothing to fit: no levels")
    names = list(free) if free is not None else default_free(base.params)

    def fit_fn(rows: list[dict[str, float]]) -> ModelParams:
        opts = {"max_evals": max_evals, "restarts": restarts, "seeds": seeds, "rounds": rounds}
        return fit_params(rows, base.params, names, prompt_lengths=prompt_lengths,
                          guard=guard, **opts)[0]  # fmt: skip

    fitted = base.model_copy(update={"params": fit_fn(levels), "name": name or base.name})
    fitted = profile_from_dict(tomllib.loads(profile_to_toml(fitted)))  # rounded as written
    pred = sweep_like(fitted.params, levels, prompt_lengths=prompt_lengths)
    fit_table = error_table("fit", pred, levels)
    sweep = f"closed loop, 10 rounds, {describe_workloads(levels)}"
    if prompt_lengths:
        low, high = min(prompt_lengths), max(prompt_lengths)
        mean = sum(prompt_lengths) / len(prompt_lengths)
        sweep += f" (prompts of {low}-{high} tokens, {mean:.0f} on average)"
    calibration: dict[str, str | float] = {
        "source": source,
        "fitted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "sweep": sweep,
        "mape": fit_table["fit_mape"],
        "max_cell_error": fit_table["fit_max_cell_error"],
        "fitted": ", ".join(names),
        "slo_ttft_ms": guard.ttft_ms,
        "set_from_deployment": str(base.calibration.get("set_from_deployment", "")),
        **fit_table,
    }
    calibration.update(_loose_table(fitted, names, levels))
    held = held_out(levels, fit_fn, prompt_lengths) if with_holdout else None
    if held is not None:
        calibration["holdout_split"] = held.split
        calibration.update(error_table("holdout", held.pred, held.target))
    return fitted.model_copy(update={"calibration": calibration}), held


def _loose_table(
    fitted: Profile, names: Sequence[str], levels: list[dict[str, float]]
) -> dict[str, str]:
    """``loose`` and ``measure_next`` for the fitted parameters the measured levels leave
    loose (``sim.identify``); empty when there are none."""
    loose = loose_parameters(fitted.params, names, levels)
    if not loose:
        return {}
    return {"loose": "; ".join(item.text() for item in loose),
            "measure_next": ", ".join(levels_to_measure(loose))}  # fmt: skip


def make_writable_folder(folder: Path) -> None:
    """Make ``folder`` (and its parents) and prove a file can be written in it; raises
    OSError. Called before a fit, so a bad output path fails at once, not after it. (The
    run's `api.run.preflight.check_output_dir` does the same, but the simulator imports nothing
    from servecap's layers: DESIGN's island rule.)"""
    for part in (folder, *folder.parents):
        if part.exists() and not part.is_dir():  # mkdir would say "File exists"
            raise NotADirectoryError(errno.ENOTDIR, f"{part} is not a directory", str(part))
    folder.mkdir(parents=True, exist_ok=True)
    probe = folder / ".servecap-write-test"
    probe.write_bytes(b"ok")
    probe.unlink()


def write_profile(profile: Profile, path: str | Path, how: str = "") -> None:
    """Write ``profile`` as TOML with a header saying how it was made."""
    cal = profile.calibration
    header = (
        f"servecap simulator profile: {profile.name}\n"
        f"Produced by the calibrator, not typed in: {how or 'servecap sim calibrate'}\n"
        f"Fit (pure closed-loop sweep): mean abs. error "
        f"{cal.get('mape', 'n/a')}, worst cell {cal.get('max_cell_error', 'n/a')}\n"
        f"Held-out ({cal.get('holdout_split', 'none: too few levels')}): mean abs. error "
        f"{cal.get('holdout_mape', 'n/a')}, worst cell {cal.get('holdout_max_cell_error', 'n/a')}"
    )
    Path(path).write_text(profile_to_toml(profile, header), encoding="utf-8")
