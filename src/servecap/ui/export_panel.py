"""The Results page's exports: the run's Benchmark Report v0.2.1 partials and its tables.

Built on a click, not on every rerun (they read the run's requests.jsonl again), and held
for the run they were built for; then one download button each, as the report's ZIP is.
"""

from __future__ import annotations

import importlib.util

import streamlit as st

from servecap.api.stored.export import br_zip, tables_zip
from servecap.core.errors import UserInputError
from servecap.storage.run_dir import Run
from servecap.ui.text import plain

STATE_KEY = "results-exports"


def _build(run: Run) -> dict[str, bytes | str]:
    """File name -> ZIP, or -> why it could not be made (an imported run has no BR)."""
    built: dict[str, bytes | str] = {}
    try:
        built["servecap-br-v0.2.1.zip"] = br_zip(run)
    except UserInputError as exc:
        built["servecap-br-v0.2.1.zip"] = str(exc)
    formats = ["csv"] + (["parquet"] if importlib.util.find_spec("pyarrow") else [])
    for fmt in formats:
        built[f"servecap-tables-{fmt}.zip"] = tables_zip(run, fmt)
    return built


LABELS = {
    "servecap-br-v0.2.1.zip": "Download Benchmark Report v0.2.1 partials (ZIP)",
    "servecap-tables-csv.zip": "Download requests and levels tables, CSV (ZIP)",
    "servecap-tables-parquet.zip": "Download requests and levels tables, Parquet (ZIP)",
}


def export_downloads(run: Run) -> None:
    """A button that builds the exports, then a download button for each."""
    held = st.session_state.get(STATE_KEY)
    if st.button("Build exports", key="results-exports-build"):
        with st.spinner("Writing the BR partials and the tables..."):
            held = (str(run.path), _build(run))
            st.session_state[STATE_KEY] = held
    if not held or held[0] != str(run.path):
        st.caption("Build the exports to download this run as llm-d Benchmark Report v0.2.1 "
                   "partials (one a level, as in its br/ folder) and as requests and levels "
                   "tables (CSV; Parquet where pyarrow is installed).")
        return
    for name, data in held[1].items():
        if isinstance(data, str):
            st.info(plain(data))
            continue
        st.download_button(LABELS[name], data=data, file_name=name, mime="application/zip",
                           key=f"results-export-{name}")
