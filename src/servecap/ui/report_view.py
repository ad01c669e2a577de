"""Render helper-built report data in Streamlit: charts, findings, tables, the ZIP download.

Everything shown comes from `servecap.api.stored.report` (the report's data model) and the
report's chart specs; nothing here computes a metric or draws a chart of its own.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

import streamlit as st

from servecap.api.stored.report import ReportModel, ReportOptions, build_report, write_report
from servecap.core.config import SLO
from servecap.core.errors import UserInputError
from servecap.report.charts_plotly import figure
from servecap.report.charts_spec import all_charts
from servecap.report.server_section import timeline_figures
from servecap.report.views import Table
from servecap.storage.run_dir import Run
from servecap.ui.labels import message_of
from servecap.ui.text import plain

# The rate charts show only for a run with open-loop levels (all_charts has them then).
SINGLE_RUN_CHARTS: tuple[str, ...] = ("ttft", "tps", "latency", "throughput", "itl",
                                      "aggregate-output", "slo-heatmap", "dashboard",
                                      "input-lengths", "output-lengths",
                                      "rate-ttft", "rate-latency", "rate-achieved",
                                      "rate-goodput")


def report_model(runs: list[Run], slo: SLO, title: str) -> ReportModel | None:
    """The report's data model, or None after showing why it cannot be built."""
    try:
        return build_report(runs, ReportOptions(title=title, slo=slo))
    except UserInputError as exc:
        st.warning(plain(message_of(exc)))
        return None


def show_charts(model: ReportModel, key: str, slugs: tuple[str, ...] | None = None) -> None:
    """The report's charts as interactive plotly figures, one tab each; each scraped run's
    timeline (client and server on one clock) is one more tab."""
    charts = [c for c in all_charts(model) if slugs is None or c.info.slug in slugs]
    if slugs is not None:
        charts.sort(key=lambda c: slugs.index(c.info.slug))
    timelines = timeline_figures(model)
    titles = [c.info.title for c in charts] + [
        plain(fig["layout"]["title"]["text"]) for fig in timelines.values()
    ]
    tabs = st.tabs(titles)
    for tab, chart in zip(tabs, charts, strict=False):
        with tab:
            fig = figure(chart)
            if fig["data"]:
                st.plotly_chart(fig, key=f"{key}-chart-{chart.info.slug}")
                st.caption(chart.info.caption)
            else:
                st.caption("Nothing to draw for these runs (e.g. no spec/baseline pair).")
    for tab, (fig_id, fig) in zip(tabs[len(charts):], timelines.items(), strict=True):
        with tab:
            st.plotly_chart(fig, key=f"{key}-{fig_id}")
            st.caption("Client TTFT and ITL per request (by send time), the server's waiting "
                       "and running requests, KV usage and speculative acceptance; shaded "
                       "bands are the levels.")


def show_findings(model: ReportModel) -> None:
    """The executive summary first, then every other finding; shown as plain text."""
    shown = model.summary or model.analysis.findings
    if not shown:
        st.text("No findings for these runs.")
        return
    for lines in model.headline.values():  # the decision first, as in the report
        st.markdown(f"**{plain(lines[0])}**")
        for line in lines[1:]:
            st.text(line)
    for finding in shown:
        # a symbol for the severity, not ASCII markers that read as part of the text
        marker = {"warning": "⚠", "notice": "ℹ"}.get(str(finding.severity), "•")
        st.text(f"{marker} {finding.text}")
    rest = [f for f in model.analysis.findings if f not in shown]
    if rest:
        with st.expander(f"All findings ({len(model.analysis.findings)})"):
            st.dataframe(
                [{"section": f.section, "severity": f.severity, "finding": f.text} for f in rest],
                hide_index=True,
            )


def show_table(table: Table, key: str) -> None:
    st.text(table.title)
    rows = [dict(zip(_unique(table.header), row, strict=False)) for row in table.rows]
    st.dataframe(rows, hide_index=True, key=key)


def _unique(header: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for name in header:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name} ({seen[name]})")
    return out


def _fingerprint(model: ReportModel) -> str:
    parts: list[Any] = [model.options.model_dump_json(), *(r.path for r in model.runs)]
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:16]


def report_zip(model: ReportModel) -> bytes:
    """The full report (HTML, Markdown, charts, tables, run files) as ZIP bytes."""
    with tempfile.TemporaryDirectory(prefix="servecap-ui-report-") as tmp:
        paths = write_report(model, Path(tmp) / "report")
        return paths.zip.read_bytes()


def report_download(model: ReportModel, key: str) -> None:
    """A button that builds the report, then a download button for its ZIP."""
    state_key = f"{key}-zip"
    fingerprint = _fingerprint(model)
    held = st.session_state.get(state_key)
    if st.button("Build report", key=f"{key}-build"):
        with st.spinner("Writing the report (charts, tables, HTML)..."):
            held = (fingerprint, report_zip(model))
            st.session_state[state_key] = held
    if held and held[0] == fingerprint:
        st.download_button(
            "Download report (ZIP)", data=held[1], file_name="servecap-report.zip",
            mime="application/zip", key=f"{key}-download",
        )
    else:
        st.caption("Build the report to download it as a ZIP (HTML, Markdown, charts, CSV).")
