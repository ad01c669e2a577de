"""The Results page's verification: predicted beside verified users, and starting a verify run.

A sweep's users are *predicted* (Little's law on C_max); a `servecap verify` run measures N
virtual users and finds the *verified* count. The page shows both, labelled, from the
verification saved beside the sweep under the sidebar's SLO (`api.stored.plan`'s
`verified_users`), and can start a verify run of the selected sweep with that SLO: its load
goes out from a child process like any app run (`run_manager.start_verify`).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from servecap.api.predict.verify import VerifyOptions
from servecap.api.stored.plan import RunCapacity
from servecap.core.config import SLO
from servecap.core.errors import UserInputError
from servecap.storage.run_dir import Run
from servecap.ui.form import secrets_for
from servecap.ui.labels import message_of
from servecap.ui.shared import run_manager
from servecap.ui.text import plain

_VERIFY = VerifyOptions()
VERIFY_DEFAULTS: dict[str, Any] = {"turns": _VERIFY.turns, "duration_s": _VERIFY.duration_s,
                                   "budget": _VERIFY.budget}


def verified_value(capacity: RunCapacity) -> str:
    """The verified-users metric: a count, "not verified", "none passed" (a search found
    no N) or "N did not pass" (only the predicted N was measured: a smaller N may)."""
    found = capacity.verification
    if found is None:
        return "not verified"
    if capacity.verified_users:
        return str(capacity.verified_users)
    return "none passed" if found.get("search_status") else (
        f"{found.get('predicted_users')} did not pass")


def verified_caption(capacity: RunCapacity) -> str | None:
    """Where the verified count comes from and how the prediction fared, one line."""
    found = capacity.verification
    if found is None:
        return None
    at = found.get("at_predicted") or {}
    error = found.get("prediction_error")
    parts = [
        f"verified by the verify run {str(found.get('verify_run', '')).rsplit('/', 1)[-1]} "
        f"(think {found.get('think')}): at the predicted {found.get('predicted_users')} users "
        f"the verdict was {at.get('verdict', 'n/a')}",
    ]
    if error is not None:
        parts.append(f"prediction error {100 * error:+.0f}%")
    if found.get("search_message"):
        parts.append(str(found["search_message"]))
    return "; ".join(parts)


def show_verification(capacity: RunCapacity) -> None:
    """A verify run's own outcome: predicted against verified, and each N it measured."""
    found = capacity.verification or {}
    c1, c2 = st.columns(2)
    c1.metric("Users (predicted, Little's law)", str(capacity.predicted_users))
    c2.metric("Users (verified, measured)", verified_value(capacity))
    caption = verified_caption(capacity)
    if caption:
        st.caption(plain(caption))
    rows = [
        {"users": lv.get("users"), "TTFT": lv.get("ttft"), "TPS": lv.get("tps"),
         "verdict": lv.get("verdict"), "mean concurrency": lv.get("mean_concurrency"),
         "N*R/(R+Z)": lv.get("law_concurrency")}
        for lv in found.get("levels", [])
    ]
    if rows:
        st.dataframe(rows, hide_index=True)


#: when the verify form searches: after every predicted N (the default), only after one that
#: misses the SLOs (as the demo does), or never
SEARCH_WHEN = ("always", "only when the predicted N misses", "never")


def verify_form(run: Run, slo: SLO) -> None:
    """Start a verify run of this sweep under the sidebar's SLO."""
    with st.expander("Verify these users (run N virtual users against the same server)"):
        c1, c2, c3 = st.columns(3)
        think = c1.text_input("Think time", f"exp:{slo.think_time_s:g}", key="verify_think",
                              help="exp:MEAN, fixed:S, lognormal:MEDIAN:SIGMA, uniform:LO:HI; "
                                   "on a simulator at x10 scale it too (exp:4.5 for 45 s)")
        turns = c2.text_input("Turns", VERIFY_DEFAULTS["turns"], key="verify_turns")
        duration = c3.number_input("Seconds per level", 1.0, 86_400.0,
                                   VERIFY_DEFAULTS["duration_s"], key="verify_duration")
        d1, d2 = st.columns(2)
        search = d1.selectbox("Search for the largest N that passes", SEARCH_WHEN,
                              key="verify_search")
        budget = d2.number_input("Most levels (search)", 1, 64, VERIFY_DEFAULTS["budget"],
                                 key="verify_budget")
        job = run_manager().current
        busy = job is not None and job.active
        if st.button("Start verify run", disabled=busy, key="start_verify"):
            options = {"statistic": slo.statistic, "ttft_slo_ms": slo.ttft_ms,
                       "tps_slo": slo.tps, "think": think, "turns": turns,
                       "duration_s": float(duration), "search": search == SEARCH_WHEN[0],
                       "search_on_miss": search == SEARCH_WHEN[1],
                       "budget": int(budget)}
            _start(run, options)
        if busy:
            st.info("A run is going: its progress is on the Run page.")


def _start(run: Run, options: dict[str, Any]) -> None:
    try:
        with st.spinner("Checking the sweep and the server..."):
            run_manager().start_verify(
                run.path, options, secrets_for(st.session_state.get("api_key", "")))
    except UserInputError as exc:
        st.error(plain(f"Not started: {message_of(exc)}"))
        return
    st.success("Verify run started: its progress is on the Run page; the verified users "
               "appear here when it ends.")
