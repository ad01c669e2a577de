"""`predict`: what a calibrated simulator profile answers for a workload, without a server.

The profile's model runs each level as a closed loop in virtual time (seconds, not
minutes: no sockets, no clocks) and the levels are judged exactly as `plan` judges a
measured run (same statistics, same C_max and users). The answer is a prediction: it carries
the profile's own held-out error (`[calibration]`: fitted on part of its levels, how far off
the rest came out), so nobody mistakes it for a measurement, and says whether the profile was
calibrated on the workload asked for: the held-out error covers other concurrencies of the
lengths it saw, not another prompt or output length.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field, computed_field

from servecap.api.predict.predict_users import UsersCheck, check_users
from servecap.core.config import SLO
from servecap.core.errors import UserInputError
from servecap.core.summary import LevelSummary
from servecap.kinds.registry import kind_of
from servecap.sim import (
    Profile,
    ProfileError,
    Request,
    calibrated_workloads,
    closed_loop_requests,
    guarded_ttft_ms,
    load_profile,
)
from servecap.stats.capacity import CapacityPlan, plan_levels
from servecap.stats.draws import chance_levels, describe_chance, describe_draws, is_stable
from servecap.stats.percentiles import describe

PREDICTION_LABEL = "simulated (prediction, not a measurement)"
#: seeded sweeps a prediction makes, to say how stable its C_max is: a P90 near the SLO moves
#: C_max a level from one draw to the next, as it moves a measured one from run to run
DEFAULT_DRAWS = 10
#: draw k sweeps level c with seed `seed + DRAW_SEED_STEP * k + c` (draw 0: the plan's)
DRAW_SEED_STEP = 1000


class Prediction(BaseModel):
    """A profile's predicted capacity for one workload."""

    profile: str
    label: str = PREDICTION_LABEL
    input_tokens: int
    output_tokens: int
    rounds: int
    plan: CapacityPlan
    levels: list[dict[str, Any]]
    # the profile's held-out error (mean abs. relative error over held-out cells), its
    # worst held-out cell, and how it was measured; None for a profile fitted without one
    holdout_mape: float | None = None
    holdout_max_cell_error: float | None = None
    holdout_split: str | None = None
    # the levels between the fitted ones that would pin down the fitted parameters those
    # leave loose ("c=16"; sim.identify), and which parameters; None: none loose
    measure_next: str | None = None
    loose: str | None = None
    # the workloads the profile was calibrated on ("128/128"); empty: it does not say
    calibrated_on: list[str] = []
    # the TTFT objective asked for (ms), and the one the profile's fit kept each P90 on the
    # measured side of (None: no fit made the profile)
    ttft_slo_ms: float | None = None
    guarded_ttft_ms: float | None = None
    # C_max and users of each seeded draw of the sweep, the first `plan`'s own
    c_max_draws: list[int | None] = []
    users_draws: list[int | None] = []
    # (concurrency, draws within both SLOs) of each level whose verdict differs between
    # draws, up to the highest first miss: where more rounds would settle C_max
    chance_levels: list[tuple[int, int]] = []
    # users run on the model as users thinking between requests (`check_users`), where
    # asked for: the plan's (where it has users) or the count asked for
    users_check: UsersCheck | None = None
    # each draw's levels (stored fields), for a caller that judges them otherwise (on
    # another statistic, on a run's clock); not part of the JSON answer
    draw_levels: list[list[dict[str, Any]]] = Field(default_factory=list, exclude=True)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def other_workload(self) -> bool:
        """True when the profile says what it was calibrated on and this workload is none of
        those, within SAME_LENGTH (a run's served count: 511 tokens for an asked 512, 134
        for 128 with a chat template)."""
        if not self.calibrated_on:
            return False
        return not any(_same_workload((self.input_tokens, self.output_tokens), seen)
                       for seen in self.calibrated_on)  # fmt: skip

    def draws_line(self) -> str | None:
        """How stable C_max is across the seeded draws, e.g. ``"Across 10 seeded draws of the
        model: C_max 32 in all 10 draws (users 431-436)."``; None for a single draw."""
        if len(self.c_max_draws) < 2:
            return None
        top = max((int(row["concurrency"]) for row in self.levels), default=None)
        users = [u for u in self.users_draws if u is not None]
        span = f"{min(users)}-{max(users)}" if users and min(users) < max(users) else None
        notes = [f"users {span or users[0]}"] if users else []
        line = f"Across {len(self.c_max_draws)} seeded draws of the model: C_max " + (
            describe_draws(self.c_max_draws, top))
        if is_stable(self.c_max_draws):
            return f"{line} ({'; '.join(notes)})." if notes else f"{line}."
        notes.append(f"the table is one draw, C_max {self.plan.c_max}")
        which = describe_chance(self.chance_levels, len(self.c_max_draws))
        them = "those levels" if len(self.chance_levels) > 1 else "it"
        return (f"{line} ({'; '.join(notes)}). A level near the SLO decides C_max by chance"
                f"{f' ({which})' if which else ''}: measure {them} with more rounds before "
                "trusting one C_max.")  # fmt: skip

    def workload_note(self) -> str | None:
        """A line for a prediction at lengths the calibration never saw, else None."""
        if not self.other_workload:
            return None
        return (
            f"calibrated on {', '.join(self.calibrated_on)} only: {self.input_tokens}/"
            f"{self.output_tokens} is a length the fit never saw, and the held-out error "
            "covers other concurrencies, not other lengths (calibrate on a second workload)"
        )

    def slo_note(self) -> str | None:
        """A line for a prediction asked at another TTFT objective than its fit guarded,
        else None."""
        asked, guarded = self.ttft_slo_ms, self.guarded_ttft_ms
        if asked is None or guarded is None or math.isclose(asked, guarded):
            return None
        return (
            f"the fit kept each P90 TTFT on its measured side of {guarded:g} ms, not of "
            f"{asked:g} ms: a P90 near {asked:g} ms can put C_max a level off (calibrate "
            f"with --ttft-slo-ms {asked:g})"
        )


#: lengths this close (relative) are one workload to a fit: a few tokens of chat template
#: or of one tokenizer's count against another's, not a length the fit never saw
SAME_LENGTH = 0.1


def _same_workload(asked: tuple[int, int], seen: str) -> bool:
    """True when ``asked`` (prompt, output) is within SAME_LENGTH of ``seen`` ("128/128")."""
    lengths = tuple(int(n) for n in seen.split("/"))
    return all(abs(a - b) <= SAME_LENGTH * b for a, b in zip(asked, lengths, strict=True))


def _level(concurrency: int, done: list[Request]) -> LevelSummary:
    """A measured-looking level summary from the simulated requests (ms, s, tokens/s)."""
    ttft = describe([1000.0 * r.ttft_s for r in done])
    itl = describe([1000.0 * r.itl_s for r in done if r.itl_s is not None])
    tps = describe([r.tokens / max(r.latency_s, 1e-9) for r in done], higher_is_better=True)
    latency = describe([r.latency_s for r in done])
    fields: dict[str, Any] = {"n_requests": len(done), "n_ok": len(done), "n_failed": 0,
                              "error_rate": 0.0}  # fmt: skip
    for stat in ("mean", "p50", "p90", "p99"):
        fields[f"ttft_{stat}_ms"] = ttft[stat]
        fields[f"itl_{stat}_ms"] = itl[stat]
        fields[f"tps_{stat}"] = tps[stat]
        fields[f"latency_{stat}_s"] = latency[stat]
    wall = max(r.sent + r.latency_s for r in done) - min(r.sent for r in done)
    if wall > 0:
        fields["rps"] = len(done) / wall
        fields["output_tok_s"] = sum(r.tokens for r in done) / wall
        fields["wall_s"] = wall
    return LevelSummary(concurrency=concurrency, **fields)


def _number(value: str | float | None) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _text(value: str | float | None) -> str | None:
    return value if isinstance(value, str) and value else None


def predict(
    profile: Profile,
    levels: Sequence[int],
    slo: SLO,
    input_tokens: int = 128,
    output_tokens: int = 128,
    rounds: int = 10,
    seed: int = 0,
    draws: int = 1,
    check: bool = False,
    users: int | None = None,
) -> Prediction:
    """Sweep ``levels`` on the profile's model in virtual time and plan them under ``slo``;
    with ``draws`` > 1, as many seeded sweeps, each one's C_max and users kept beside; with
    ``check``, ``users`` users (default: the plan's) run on the model too
    (`api.predict.predict_users`)."""
    swept = [
        _sweep(profile, levels, input_tokens, output_tokens, rounds, seed + DRAW_SEED_STEP * k)
        for k in range(max(1, draws))
    ]
    plans = [plan_levels(summaries, slo, kind_of) for summaries in swept]
    cal = profile.calibration
    split = cal.get("holdout_split")
    plan = plans[0]
    users_check = _check(profile, plan, swept[0], slo, users, (input_tokens, output_tokens),
                         seed) if check else None  # fmt: skip
    return Prediction(
        profile=profile.name, input_tokens=input_tokens, output_tokens=output_tokens,
        rounds=rounds, plan=plan, levels=[s.stored() for s in swept[0]],
        holdout_mape=_number(cal.get("holdout_mape")),
        holdout_max_cell_error=_number(cal.get("holdout_max_cell_error")),
        holdout_split=split if isinstance(split, str) else None,
        measure_next=_text(cal.get("measure_next")), loose=_text(cal.get("loose")),
        calibrated_on=calibrated_workloads(cal),
        ttft_slo_ms=slo.ttft_ms, guarded_ttft_ms=guarded_ttft_ms(cal),
        c_max_draws=[plan.c_max for plan in plans] if draws > 1 else [],
        users_draws=[plan.users for plan in plans] if draws > 1 else [],
        chance_levels=chance_levels(plans) if draws > 1 else [], users_check=users_check,
        draw_levels=[[s.stored() for s in summaries] for summaries in swept],
    )  # fmt: skip


def _sweep(
    profile: Profile, levels: Sequence[int], input_tokens: int, output_tokens: int,
    rounds: int, seed: int,
) -> list[LevelSummary]:  # fmt: skip
    """One seeded closed-loop sweep of ``levels``, level c seeded ``seed + c``."""
    return [
        _level(c, closed_loop_requests(
            profile.params, c, rounds, input_tokens, output_tokens, seed=seed + c))
        for c in sorted(set(levels))
    ]  # fmt: skip


def _check(
    profile: Profile, plan: CapacityPlan, levels: list[LevelSummary], slo: SLO,
    users: int | None, lengths: tuple[int, int], seed: int,
) -> UsersCheck | None:  # fmt: skip
    """``users`` (default: the plan's) run on the model; its warm-up from the plan's mean
    latency at C_max, or, without one, from the slowest level's (None: nothing to run)."""
    count = users if users is not None else plan.users
    latency = plan.latency_mean_s or max((lv.latency_mean_s or 0.0 for lv in levels), default=0.0)
    if not count or not latency:
        return None
    return check_users(profile.params, count, latency, slo, *lengths, seed)


def predicting_profile(name: str, what: str = "") -> Profile:
    """The profile to predict with (a built-in name or a file). An unknown one, or one with
    a fixed schedule (it models no deployment), is a `UserInputError`, its message led by
    `what` (the flag or field that named it) when given."""
    lead = f"{what}: " if what else ""
    try:
        profile = load_profile(name)
    except ProfileError as exc:
        raise UserInputError(f"{lead}{exc}") from None
    if profile.params.fixed:
        raise UserInputError(f"{lead}profile {profile.name} has a fixed schedule: "
                             "it predicts nothing")  # fmt: skip
    return profile


def error_label(mape: float | None, worst: float | None, measure_next: str | None = None) -> str:
    """``"held-out error 7.1% (worst cell 24%)"``, or says there is none; with
    ``measure_next``, adds where the fit's levels left parameters loose."""
    if mape is None:
        head = "no held-out error (the profile was fitted without one)"
    else:
        tail = f" (worst cell {worst:.0%})" if worst is not None else ""
        head = f"held-out error {mape:.1%}{tail}"
    return head + (f"; {loose_label(measure_next)}" if measure_next else "")


def loose_label(measure_next: str) -> str:
    """What a profile's ``measure_next`` means for its predictions, in a few words."""
    return f"parameters loose at {measure_next}, which it was not fitted on: measure there"


__all__ = [
    "DEFAULT_DRAWS", "PREDICTION_LABEL", "Prediction", "error_label", "loose_label", "predict",
    "predicting_profile",
]  # fmt: skip
