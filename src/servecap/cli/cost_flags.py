"""`--gpus`, `--gpu-hour-cost` and `--currency`: what a deployment costs (plan, report,
capacity, compare; stored with the run by `run`)."""

from __future__ import annotations

from typing import Annotated

import typer
from pydantic import ValidationError

from servecap.core.cost import CostFields
from servecap.core.validation import user_input_error

COST_FLAGS = {"gpus": "--gpus", "gpu_hour_cost": "--gpu-hour-cost", "currency": "--currency"}

GpusOption = Annotated[float | None, typer.Option(
    "--gpus", help="GPUs the deployment runs on (cost per user and per token)")]
GpuHourCostOption = Annotated[float | None, typer.Option(
    "--gpu-hour-cost", help="Price of one GPU-hour, in --currency")]
CurrencyOption = Annotated[str | None, typer.Option(
    "--currency", help="Currency of --gpu-hour-cost (default USD)")]


def cost_fields(
    gpus: float | None, gpu_hour_cost: float | None, currency: str | None
) -> CostFields:
    """The cost flags, checked: a negative count or price is exit 2 with one message."""
    try:
        return CostFields(gpus=gpus, gpu_hour_cost=gpu_hour_cost, currency=currency)
    except ValidationError as exc:
        raise user_input_error(exc, COST_FLAGS) from None
