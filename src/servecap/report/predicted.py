"""Predicted beside measured: a calibrated profile's answer for a run's own levels and lengths.

Data only (the tables: `report.predicted_views`). The prediction itself is made in the api
layer (`api.predict.predict_beside`), where the simulator runs: each reported closed-loop run's
concurrency levels are swept on
the profile's model at the run's prompt and output lengths and judged as the run was. The
tables put each measured mean beside its prediction and the relative error, and C_max and
users beside the predicted ones, under the profile's label and held-out error, so a reader
sees how far the profile is to be trusted for this deployment before using it for a what-if.
"""

from __future__ import annotations

from pydantic import BaseModel

from servecap.core.users_check import UsersCheck

#: (column title, level field, digits): the means compared, the P90 TTFT a capacity rests on
COMPARED: tuple[tuple[str, str, int], ...] = (
    ("TTFT mean ms", "ttft_mean_ms", 1),
    ("TTFT P90 ms", "ttft_p90_ms", 1),
    ("ITL mean ms", "itl_mean_ms", 2),
    ("TPS mean tok/s", "tps_mean", 1),
    ("latency mean s", "latency_mean_s", 2),
)


class PredictedCapacity(BaseModel):
    """One statistic's C_max and users, as measured and as predicted."""

    statistic: str  # "p90" or "mean"
    measured_c_max: int | None
    measured_users: int | None
    measured_lower_bound: bool = False
    predicted_c_max: int | None
    predicted_users: int | None
    predicted_lower_bound: bool = False
    # the predicted C_max of each seeded draw of the model (the first is predicted_c_max),
    # and the highest level swept (a C_max there is a lower bound)
    predicted_c_max_draws: list[int | None] = []
    top_level: int | None = None
    # (concurrency, draws within both SLOs) of the levels that decide C_max by chance
    # (`stats.draws.chance_levels`)
    predicted_chance_levels: list[tuple[int, int]] = []
    # the predicted users run on the model as users thinking between requests
    # (`api.predict.predict_users`), on the run's clock; None where the plan has no users
    users_check: UsersCheck | None = None


class PredictedRun(BaseModel):
    """A run's measured levels beside what a profile predicts for them."""

    config: str  # the report's name for the run
    profile: str
    label: str  # "simulated (prediction, not a measurement)"
    error: str  # the profile's held-out error, as a phrase
    workload: str  # "128/128": the run's prompt / output tokens, at which it was predicted
    note: str | None = None  # the run's lengths were never calibrated, etc.
    # concurrency -> field -> (measured, predicted)
    levels: dict[int, dict[str, tuple[float | None, float | None]]]
    capacity: list[PredictedCapacity]

    def errors(self) -> list[float]:
        """Relative error of every compared cell that has both numbers."""
        return [
            abs(pred - meas) / abs(meas)
            for cells in self.levels.values()
            for meas, pred in cells.values()
            if meas is not None and pred is not None and meas != 0
        ]


__all__ = ["COMPARED", "PredictedCapacity", "PredictedRun"]
