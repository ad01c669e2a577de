"""GPUs and their price on the Results and Compare pages: the cost at the SLO boundary
beside peak throughput (Results), which deployment is cheaper per served user (Compare);
and a `--power-metrics` run's energy per level (Results)."""

from __future__ import annotations

from typing import Any

import streamlit as st
from pydantic import ValidationError

from servecap.api.stored.plan import plan_runs
from servecap.core.config import SLO
from servecap.core.cost import CostFields
from servecap.report.cost_views import COST_HEADER, basis_text, cost_rows
from servecap.report.energy_views import ENERGY_HEADER, energy_rows
from servecap.storage.run_dir import Run
from servecap.ui.text import plain


def cost_inputs(prefix: str, stored: dict[str, Any] | None = None) -> CostFields | None:
    """GPUs, price per GPU-hour and currency (a run's stored ones preset); 0 GPUs: none
    given. A value the model refuses is shown as an error and gives no cost."""
    stored = stored or {}
    c1, c2, c3 = st.columns(3)
    gpus = c1.number_input("GPUs", 0.0, 1_000_000.0, float(stored.get("gpus") or 0.0),
                           key=f"{prefix}-gpus", help="0: no cost")
    price = c2.number_input("Price per GPU-hour", 0.0, 1e9,
                            float(stored.get("gpu_hour_cost") or 0.0), key=f"{prefix}-price")
    currency = c3.text_input("Currency", str(stored.get("currency") or "USD"),
                             key=f"{prefix}-currency")
    if not gpus:
        return None
    try:
        return CostFields(gpus=gpus, gpu_hour_cost=price, currency=currency.strip() or None)
    except ValidationError as exc:
        st.error(plain(f"cost: {exc.errors()[0]['msg']}"))
        return None


def show_run_cost(run: Run, slo: SLO) -> None:
    """Cost per million output tokens, users per GPU and per user-hour at C_max, at the
    verified users and at peak throughput, under the sidebar's SLOs."""
    fields = cost_inputs("results-cost", run.info.cost)
    if fields is None:
        st.caption("Enter the GPUs and their hourly price to see what a user and a million "
                   "output tokens cost at the SLO boundary.")
        return
    cost = plan_runs([run], slo, cost=fields).runs[0].cost
    if cost is None:
        return
    st.caption(plain(basis_text(cost)))
    st.dataframe([dict(zip(COST_HEADER[1:], row[1:], strict=True))
                  for row in cost_rows(run.name, cost)], hide_index=True)
    st.caption("cost / M output tokens = hourly cost / (output tok/s x 3600) x 1e6; "
               "cost / user / hour = hourly cost / users; peak throughput is where tokens "
               "are cheapest, C_max what the SLO costs.")


def show_run_energy(run: Run, slo: SLO) -> None:
    """Per level mean power, energy and J per output token (`--power-metrics` runs), C_max
    and peak throughput marked; nothing for a run measured without it."""
    capacity = plan_runs([run], slo).runs[0]
    if not capacity.energy:
        return
    st.subheader("Energy")
    marks = {point.get("level", ""): at for at, point in capacity.energy.items()}
    rows = energy_rows(run.name, run.levels, marks)
    st.dataframe([dict(zip(ENERGY_HEADER[1:], row[1:], strict=True)) for row in rows],
                 hide_index=True)
    st.caption("Energy over each level's token window (first token to last), from the DCGM "
               "exporter's energy counter; mean power = energy / window; a level the scrapes "
               "did not cover says why in its note.")
