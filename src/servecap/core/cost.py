"""What a deployment costs to run: its GPUs and their hourly price (`--gpus`, `--gpu-hour-cost`).

Stored with a run (`run.json`'s `cost`) when given to `run`; `plan`, `report`, `capacity`,
`compare` and the app take the same fields, and a value given there overrides the stored
one field by field (`CostFields.over`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

# A GPU count or hourly price this large is a typo, not a deployment.
MAX_GPUS = 1_000_000
MAX_HOUR_COST = 1e9


class CostBasis(BaseModel):
    """A deployment's GPUs and the price of one GPU-hour, in `currency`."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    gpus: float = Field(gt=0, le=MAX_GPUS)
    gpu_hour_cost: float = Field(ge=0, le=MAX_HOUR_COST)
    currency: str = Field(default="USD", min_length=1, max_length=12, pattern=r"^[A-Za-z$€£¥]+$")

    @property
    def hourly(self) -> float:
        """The deployment's cost per hour: gpus x the price of one GPU-hour."""
        return self.gpus * self.gpu_hour_cost


class CostFields(BaseModel):
    """Cost flags as given: any of them may be missing (a stored run's may fill the rest)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    gpus: float | None = Field(default=None, gt=0, le=MAX_GPUS)
    gpu_hour_cost: float | None = Field(default=None, ge=0, le=MAX_HOUR_COST)
    currency: str | None = Field(
        default=None, min_length=1, max_length=12, pattern=r"^[A-Za-z$€£¥]+$")

    def given(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)

    def over(self, stored: dict[str, Any] | None) -> CostBasis | None:
        """These fields over a run's stored ones; None unless GPUs and price are both known.
        A stored value that no longer validates is dropped, never an error on load."""
        merged = {**(stored or {}), **self.given()}
        if merged.get("gpus") is None or merged.get("gpu_hour_cost") is None:
            return None
        try:
            return CostBasis.model_validate(
                {k: merged[k] for k in ("gpus", "gpu_hour_cost", "currency") if k in merged})
        except ValueError:
            return None
