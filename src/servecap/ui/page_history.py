"""History and compare: every saved run, and the report's comparison views for a pick."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from servecap.api.stored.plan import plan_runs
from servecap.api.stored.report import ReportModel
from servecap.api.stored.runs import scan_results
from servecap.core.config import SLO
from servecap.report.views import (
    capacity_table,
    deployment_tables,
    overview,
    recommendation_table,
    slo_table,
    speedup_table,
)
from servecap.storage.run_dir import Run
from servecap.ui.import_panel import render_import_panel
from servecap.ui.report_view import (
    report_download,
    report_model,
    show_charts,
    show_findings,
    show_table,
)
from servecap.ui.tables import capacity_rows, history_row, run_label
from servecap.ui.text import plain

COMPARE_KEY = "compare_runs"


def _comparison_tables(model: ReportModel) -> None:
    levels = model.analysis.levels
    for c in sorted({levels[0], levels[-1]}) if levels else []:
        show_table(overview(model, c), f"cmp-overview-{c}")
    stat = model.options.slo.statistic
    show_table(slo_table(model, stat), "cmp-slo")
    show_table(capacity_table(model, stat), "cmp-capacity")
    if model.analysis.speedups:
        show_table(speedup_table(model), "cmp-speedup")
    show_table(recommendation_table(model), "cmp-recommend")
    differing, _ = deployment_tables(model)
    if differing.rows:
        show_table(differing, "cmp-deployment")


def _compare(runs: list[Run], slo: SLO) -> None:
    st.subheader("Capacity")
    st.dataframe(capacity_rows(plan_runs(runs, slo).runs), hide_index=True)
    model = report_model(runs, slo, title="Deployment comparison")
    if model is None:
        return
    st.subheader("Findings")
    show_findings(model)
    st.subheader("Charts")
    show_charts(model, "compare")
    st.subheader("Tables")
    _comparison_tables(model)
    st.subheader("Report")
    report_download(model, "compare")


def render_history_page(results: Path, slo: SLO) -> None:
    st.title("History & compare")
    render_import_panel(results)
    index = scan_results(results)
    for problem in index.problems:
        st.warning(plain(problem))
    if not index.runs:
        st.info(plain(f"No saved runs in {results} yet."))
        return
    st.dataframe([history_row(run) for run in index.runs], hide_index=True)
    labels = {run.path.name: run_label(run) for run in index.runs}
    kept = [f for f in st.session_state.get(COMPARE_KEY, []) if f in labels]
    if COMPARE_KEY in st.session_state:
        st.session_state[COMPARE_KEY] = kept
    picked = st.multiselect("Compare runs", list(labels), format_func=lambda f: labels[f],
                            key=COMPARE_KEY, placeholder="pick two or more runs")
    # in the history's order, not the order picked: each run keeps its colour (and its
    # place in the tables) whatever was selected first, as in a report over the same runs
    chosen = set(picked)
    runs = [run for run in index.runs if run.path.name in chosen]
    if len(runs) < 2:
        st.info("Pick two or more runs to compare them.")
        return
    _compare(runs, slo)
