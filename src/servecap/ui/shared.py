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
    """The seed's sidebar: TTFT SLO, TPS SLO, statistic and think time."""
    side, default = st.sidebar, SLO()
    side.header("Capacity planning")
    ttft = side.number_input("TTFT SLO (ms)", min_value=1.0, max_value=600_000.0,
                             value=default.ttft_ms, step=50.0, key="slo_ttft")
    tps = side.number_input("TPS SLO (tok/s per user)", min_value=0.0, max_value=100_000.0,
                            value=default.tps, step=1.0, key="slo_tps")
    statistic = side.radio("Statistic", ["p90", "mean"], key="slo_stat", horizontal=True,
                           index=["p90", "mean"].index(default.statistic),
                           format_func=lambda s: "P90 (tail)" if s == "p90" else "mean")
    think = side.number_input("Think time (s)", min_value=0.0, max_value=86_400.0,
                              value=default.think_time_s, step=5.0, key="slo_think")
    return SLO(ttft_ms=float(ttft), tps=float(tps), think_time_s=float(think),
               statistic="mean" if statistic == "mean" else "p90")
