"""Predicted beside measured: sweep a profile at each reported run's own levels and lengths.

For every closed-loop run of a report, the profile's model runs the run's concurrency levels
at the run's prompt and output lengths and rounds (`api.predict.predict`, virtual time), and the
answer is judged on both statistics as the run was. A run measured against `servecap sim
--time-scale S` ran S times faster than the modelled deployment, so the prediction is put on
the run's clock (times / S, rates x S) before it is compared or judged. What comes back is
`report.predicted`'s data; the report and the app render it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from servecap.api.predict.predict import DEFAULT_DRAWS, error_label, predict
from servecap.api.predict.predict_users import check_users
from servecap.core.config import SLO
from servecap.core.summary import LevelSummary
from servecap.core.users_check import UsersCheck
from servecap.kinds.registry import kind_of
from servecap.report.model import ReportModel, RunMeta
from servecap.report.predicted import COMPARED, PredictedCapacity, PredictedRun
from servecap.sim import DEFAULT_WORKLOAD, Profile, builtin_names, load_profile
from servecap.stats.capacity import CapacityPlan, plan_levels
from servecap.stats.draws import chance_levels

STATISTICS = ("p90", "mean")


def _length(config_value: Any, level_means: list[float | None]) -> int | None:
    """A run's length: its fixed flag value, else the mean its levels sent, else None."""
    if isinstance(config_value, int) and not isinstance(config_value, bool):
        return config_value
    sent = [v for v in level_means if v is not None]
    return round(sum(sent) / len(sent)) if sent else None


def asked_workload(meta: RunMeta, levels: list[LevelSummary]) -> tuple[int, int] | None:
    """(prompt, output) tokens of a run as it asked for them; None when it does not say (an
    imported table)."""
    prompt = _length(meta.config.get("input_tokens"), [lv.input_tokens_sent_mean for lv in levels])
    output = _length(
        meta.config.get("output_tokens"), [lv.output_tokens_sent_mean for lv in levels]
    )
    return (prompt, output) if prompt is not None and output is not None else None


def served_workload(levels: list[LevelSummary]) -> tuple[int, int] | None:
    """(prompt, output) tokens of a run as its server counted them (its usage): the unit `sim
    calibrate` fits a profile in; None where the server did not report them."""
    if not levels or not all(lv.tokens_from_usage for lv in levels):
        return None
    prompt = _length(None, [lv.prompt_tokens_mean for lv in levels])
    output = _length(None, [lv.completion_tokens_mean for lv in levels])
    return (prompt, output) if prompt is not None and output is not None else None


def at_time_scale(row: dict[str, Any], scale: float) -> dict[str, Any]:
    """A predicted level on the clock of a run measured at simulator time scale `scale`."""
    if scale == 1.0:
        return row
    out = dict(row)
    for key, value in row.items():
        if not isinstance(value, int | float) or isinstance(value, bool) or key == "concurrency":
            continue
        if key.endswith(("_ms", "_s")):
            out[key] = value / scale
        elif key.startswith(("tps_", "decode_tps_")) or key in ("rps", "output_tok_s"):
            out[key] = value * scale
    return out


def _predict_run(profile: Profile, model: ReportModel, meta: RunMeta) -> PredictedRun | None:
    measured = [lv for lv in meta.levels if lv.concurrency is not None]
    if not measured:
        return None
    # predicted at the tokens the server counted (a profile's unit), named by those asked for
    asked, served = asked_workload(meta, measured), served_workload(measured)
    recorded = served or asked
    prompt, output = recorded or DEFAULT_WORKLOAD
    rounds = meta.config.get("rounds")
    rounds = rounds if isinstance(rounds, int) and rounds >= 1 else 10
    slo = model.options.slo
    levels = [lv.concurrency for lv in measured if lv.concurrency is not None]
    pred = predict(profile, levels, slo, prompt, output, rounds, draws=DEFAULT_DRAWS)
    scale = meta.time_scale or 1.0
    draws = [[LevelSummary.model_validate(at_time_scale(row, scale)) for row in drawn]
             for drawn in pred.draw_levels]  # fmt: skip
    rows = draws[0]
    by_c = {row.concurrency: row for row in rows}
    cells = {
        lv.concurrency: {key: (getattr(lv, key), getattr(by_c[lv.concurrency], key))
                         for _, key, _ in COMPARED}
        for lv in measured if lv.concurrency is not None
    }  # fmt: skip
    notes = [pred.workload_note(), pred.slo_note()]
    if recorded is None:
        notes.append(f"the run does not record its lengths: predicted at {prompt}/{output}")
    if asked is not None and served is not None and asked != served:
        notes.append(f"predicted at the tokens the server counted, {prompt}/{output}")
    shown = asked or (prompt, output)
    if scale != 1.0:
        notes.append(f"predicted on the run's clock (time scale {scale:g}x)")
    note = "; ".join(n for n in notes if n)
    return PredictedRun(
        config=meta.name, profile=profile.name, label=pred.label,
        error=error_label(pred.holdout_mape, pred.holdout_max_cell_error, pred.measure_next),
        workload=f"{shown[0]}/{shown[1]}", note=note or None, levels=cells,
        capacity=[_capacity(model, meta.name, draws, slo.model_copy(update={"statistic": stat}),
                            _UsersRun(profile, prompt, output, scale))
                  for stat in STATISTICS],
    )  # fmt: skip


@dataclass(frozen=True)
class _UsersRun:
    """What running a plan's users on the model needs: the profile, the run's lengths and
    its simulator time scale."""

    profile: Profile
    prompt: int
    output: int
    scale: float

    def check(self, plan: CapacityPlan, slo: SLO) -> UsersCheck | None:
        if not plan.users or not plan.latency_mean_s:
            return None
        return check_users(self.profile.params, plan.users, plan.latency_mean_s, slo,
                           self.prompt, self.output, time_scale=self.scale)  # fmt: skip


def _capacity(
    model: ReportModel, config: str, draws: list[list[LevelSummary]], slo: SLO,
    users: _UsersRun,
) -> PredictedCapacity:  # fmt: skip
    """One statistic's capacity (``slo.statistic``), measured beside predicted (the first
    draw's, with every draw's C_max beside it, and its users run on the model)."""
    stat = slo.statistic
    plans = [plan_levels(rows, slo, kind_of) for rows in draws]
    plan = plans[0]
    measured = model.analysis.slo.capacity_of(stat, config)
    return PredictedCapacity(
        statistic=stat,
        measured_c_max=measured.c_max if measured else None,
        measured_users=measured.users if measured else None,
        measured_lower_bound=bool(measured and measured.c_max_lower_bound),
        predicted_c_max=plan.c_max, predicted_users=plan.users,
        predicted_lower_bound=plan.c_max_lower_bound,
        predicted_c_max_draws=[each.c_max for each in plans],
        predicted_chance_levels=chance_levels(plans),
        top_level=max((int(lv.concurrency or 0) for lv in draws[0]), default=None),
        users_check=users.check(plan, slo),
    )  # fmt: skip


def predicting_profiles() -> list[str]:
    """The built-in profiles that can predict (every one with a step model)."""
    return [name for name in builtin_names() if not load_profile(name).params.fixed]


def predict_beside(profile: Profile, model: ReportModel) -> list[PredictedRun]:
    """The profile's prediction beside every closed-loop run of the report."""
    out = [_predict_run(profile, model, meta) for meta in model.runs]
    return [run for run in out if run is not None]


def with_predictions(model: ReportModel, profile: Profile) -> ReportModel:
    """The report with the profile's predictions beside its runs, and a methodology row
    saying which profile predicted them and how far it is to be trusted."""
    predicted = predict_beside(profile, model)
    if predicted:
        how = f"profile {profile.name}: {predicted[0].label}; {predicted[0].error}"
    else:
        how = f"profile {profile.name}: no closed-loop run to predict"
    row = ("Predicted beside measured", how)
    return model.model_copy(
        update={"predicted": predicted, "methodology": [*model.methodology, row]}
    )


__all__ = [
    "asked_workload", "at_time_scale", "predict_beside", "predicting_profiles",
    "served_workload", "with_predictions",
]  # fmt: skip
