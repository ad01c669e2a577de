"""The Results page's predicted beside measured: a calibrated simulator profile's answer for
the run's own levels and lengths, next to what was measured (as `report --predict` shows it).

Picking a profile is how a user learns whether a profile can stand in for this deployment
before asking it a what-if (`servecap sim predict`): the tables give every cell's error and
C_max and users on both statistics, under the profile's label and held-out error.
"""

from __future__ import annotations

import streamlit as st

from servecap.api.predict.predict import predicting_profile
from servecap.api.predict.predict_beside import predicting_profiles, with_predictions
from servecap.core.errors import UserInputError
from servecap.report.model import ReportModel
from servecap.report.predicted_views import predicted_tables
from servecap.ui.labels import message_of
from servecap.ui.text import plain

NONE = "(none)"
KEY = "results-predict"


def _chosen(key: str) -> str | None:
    names = [NONE, *predicting_profiles()]
    choice = st.selectbox("Profile", names, key=key,
                          help="A built-in simulator profile to predict this run with")  # fmt: skip
    path = st.text_input("or a profile file (.toml, e.g. from `servecap sim calibrate`)",
                         key=f"{key}-file")  # fmt: skip
    if path.strip():
        return path.strip()
    return None if choice == NONE else choice


def predict_panel(model: ReportModel, key: str = KEY) -> ReportModel:
    """Show the chosen profile's prediction beside the run; returns the model with it (so
    the report built from the page carries the same tables), or unchanged."""
    chosen = _chosen(key)
    if chosen is None:
        st.caption("Pick a profile to see its prediction of these levels beside the "
                   "measurement: how far a what-if on it is to be trusted here.")  # fmt: skip
        return model
    try:
        predicted = with_predictions(model, predicting_profile(chosen, what="profile"))
    except UserInputError as exc:
        st.error(plain(message_of(exc)))
        return model
    if not predicted.predicted:
        st.info("This run has no closed-loop level to predict.")
        return predicted
    for table in predicted_tables(predicted.predicted):
        st.caption(plain(table.title))
        rows = [dict(zip(table.header, row, strict=True)) for row in table.rows]
        st.dataframe(rows, hide_index=True)
    return predicted


__all__ = ["predict_panel"]
