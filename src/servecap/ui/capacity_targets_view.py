"""The Capacity page's answer for several targets (`servecap capacity --target`): the
comparison's sentence, a row per target (C_max with its bracket, users), and the deltas."""

from __future__ import annotations

from typing import Any

import streamlit as st

from servecap.storage.capacity_targets import CapacityTargetsAnswer, bracket
from servecap.ui.text import plain


def target_rows(answer: CapacityTargetsAnswer) -> list[dict[str, Any]]:
    """One row per target: its status, C_max with its bracket, users and probes."""
    rows = []
    for target in answer.targets:
        low, high = bracket(target)
        rows.append({
            "target": target.deployment, "status": target.status, "C_max": target.c_max,
            "bracket": f"{low:g}..{'unbounded' if high == float('inf') else f'{high:g}'}",
            "first miss": target.first_miss, "predicted users": target.predicted_users,
            "verified users": target.verified_users, "probes": len(target.probes),
            "requests": target.requests,
        })
    return rows


def delta_rows(answer: CapacityTargetsAnswer) -> list[dict[str, Any]]:
    """One row per delta against the first target: B - A with its interval."""
    return [{"B - A": f"{d.b} - {d.a}", "C_max difference": d.c_max,
             "interval": d.interval_text(), "better": d.better, "users difference": d.users,
             "users from": d.users_basis} for d in answer.deltas]


def render_targets_answer(answer: CapacityTargetsAnswer) -> None:
    (st.success if answer.winner else st.warning)(plain(answer.sentence()))
    st.dataframe(target_rows(answer), hide_index=True)
    st.dataframe(delta_rows(answer), hide_index=True)
    st.caption(plain("probes in the order run: " + ", ".join(
        f"{t.target} c={t.concurrency}" for t in answer.order)))
