"""The servecap Streamlit app (`servecap ui`): find capacity, run, watch, plan and compare."""

from __future__ import annotations

import streamlit as st

from servecap.ui.page_capacity import render_capacity_page
from servecap.ui.page_compare import render_compare_page
from servecap.ui.page_history import render_history_page
from servecap.ui.page_results import render_results_page
from servecap.ui.page_run import render_run_page
from servecap.ui.shared import results_dir, slo_controls

PAGES: tuple[str, ...] = ("Run", "Capacity", "Results", "History & compare", "Compare")


def main() -> None:
    st.set_page_config(page_title="servecap", layout="wide")
    results = results_dir()
    page = st.sidebar.radio("Page", list(PAGES), key="page")
    st.sidebar.text(f"results: {results}")
    slo = slo_controls()
    if page == "Results":
        render_results_page(results, slo)
    elif page == "History & compare":
        render_history_page(results, slo)
    elif page == "Compare":
        render_compare_page(results, slo)
    elif page == "Capacity":
        render_capacity_page(results, slo)
    else:
        render_run_page(results)


if __name__ == "__main__":
    main()
