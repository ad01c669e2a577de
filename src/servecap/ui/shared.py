"""Process-wide resources and controls shared by the pages."""

from __future__ import annotations

import argparse
import atexit
import sys
from pathlib import Path

import streamlit as st

from servecap.core.config import SLO
from servecap.ui.run_manager import RunManager
from servecap.ui.sim_holder import SimHolder

RESULTS_KEY = "results_dir"


@st.cache_resource
def run_manager() -> RunManager:
    """One run manager per server process: runs outlive the tab that started them.

    When the app process exits, a run still going is cancelled and saved (incomplete).
    """
    manager = RunManager()
    atexit.register(manager.shutdown)
    return manager


@st.cache_resource
def sim_holder() -> SimHolder:
    return SimHolder()


def parse_app_args(argv: list[str]) -> Path:
    """`streamlit run app.py -- --results DIR`: the results directory."""
    parser = argparse.ArgumentParser(prog="servecap-ui", add_help=False)
    parser.add_argument("--results", default="results")
    known, _ = parser.parse_known_args(argv)
    return Path(known.results)


def results_dir() -> Path:
    """Set by `servecap ui --results` (tests may preset it in session state)."""
    if RESULTS_KEY not in st.session_state:
        st.session_state[RESULTS_KEY] = str(parse_app_args(sys.argv[1:]))
    return Path(st.session_state[RESULTS_KEY])


def slo_controls() -> SLO:
    """The seed's sidebar: TTFT SLO, TPS SLO, statistic and think time; and the task time
    agents levels are judged on.

    Typed values are checked, not clamped: -5 or an empty box gets a message beside it and
    the last valid value stays in force (a number input would silently put back its limit).
    """
    side, default = st.sidebar, SLO()
    side.header("Capacity planning")
    ttft = _number("TTFT SLO (ms)", "slo_ttft", default.ttft_ms, above=0.0)
    tps = _number("TPS SLO (tok/s per user)", "slo_tps", default.tps, at_least=0.0)
    statistic = side.radio("Statistic", ["p90", "mean"], key="slo_stat", horizontal=True,
                           index=["p90", "mean"].index(default.statistic),
                           format_func=lambda s: "P90 (tail)" if s == "p90" else "mean")
    think = _number("Think time (s)", "slo_think", default.think_time_s, at_least=0.0)
    task = _number("Task time SLO (s, agents)", "slo_task", default.task_time_s, above=0.0)
    return SLO(ttft_ms=ttft, tps=tps, think_time_s=think, task_time_s=task,
               statistic="mean" if statistic == "mean" else "p90")


def _number(
    label: str, key: str, default: float, above: float | None = None,
    at_least: float | None = None,
) -> float:
    """A sidebar number typed as text; an invalid entry is named and the last good one kept."""
    good_key = f"{key}_valid"
    last = float(st.session_state.get(good_key, default))
    text = st.sidebar.text_input(label, value=f"{default:g}", key=key)
    problem = number_problem(text, above, at_least)
    if problem:
        st.sidebar.error(f"{label}: {problem}; still using {last:g}")
        return last
    value = float(text)
    st.session_state[good_key] = value
    return value


def number_problem(text: str, above: float | None, at_least: float | None) -> str | None:
    """Why `text` is not an acceptable value, or None."""
    try:
        value = float(text.strip())
    except ValueError:
        return "enter a number" if not text.strip() else f"{text.strip()!r} is not a number"
    if value != value or value in (float("inf"), float("-inf")):
        return "enter a finite number"
    if above is not None and value <= above:
        return f"must be more than {above:g} (got {value:g})"
    if at_least is not None and value < at_least:
        return f"must be at least {at_least:g} (got {value:g})"
    return None
