"""The Results page: one run's decision and capacity under the sidebar SLOs, its charts,
then its levels, the prediction beside them and the findings."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from servecap.analysis.headline import Held, headline
from servecap.api.stored.plan import RunCapacity, plan_runs
from servecap.api.stored.runs import RunIndex, capacity_sentence, scan_results
from servecap.core.config import SLO
from servecap.kinds.agents_verdict import agents_plan_sentence
from servecap.storage.run_dir import Run
from servecap.ui.cost_panel import show_run_cost, show_run_energy
from servecap.ui.export_panel import export_downloads
from servecap.ui.predict_panel import predict_panel
from servecap.ui.report_view import (
    SINGLE_RUN_CHARTS,
    report_download,
    report_model,
    show_charts,
    show_findings,
)
from servecap.ui.tables import level_rows, run_label, verdict_rows
from servecap.ui.text import plain
from servecap.ui.verify_agents_panel import verify_agents_form
from servecap.ui.verify_panel import (
    show_verification,
    verified_caption,
    verified_value,
    verify_form,
)

RUN_KEY = "results_run"


def pick_run(index: RunIndex) -> Run | None:
    """A selectbox of saved runs, newest first (the run just finished preselected)."""
    labels = {run.path.name: run_label(run) for run in index.runs}
    if st.session_state.get(RUN_KEY) not in labels:
        st.session_state.pop(RUN_KEY, None)
    folder = st.selectbox("Run", list(labels), format_func=lambda f: labels[f], key=RUN_KEY)
    return index.by_folder(folder) if folder else None


def _run_header(run: Run) -> None:
    info = run.info
    config = info.config
    client = config.get("client") if isinstance(config.get("client"), dict) else {}
    lines = [
        f"name: {info.name}",
        f"model: {config.get('model') or 'not recorded'}",
        f"server: {(client or {}).get('base_url') or info.source}",
        f"status: {info.status}" + (f" ({info.stop_reason})" if info.stop_reason else ""),
        f"created: {info.created_at or 'not recorded'}",
        f"rounds: {config.get('rounds', '?')}, input tokens: {config.get('input_tokens', '?')}, "
        f"output tokens: {config.get('output_tokens', '?')}",
    ]
    if config.get("notes"):
        lines.append(f"notes: {config['notes']}")
    if info.time_scale:
        lines.append(f"simulator time scale: {info.time_scale:g}x")
    st.text("\n".join(lines))


def show_capacity(run: Run, slo: SLO) -> None:
    """C_max and users for this run under the sidebar's SLOs (recomputed on every change),
    after the `servecap capacity` answer the run belongs to, if any."""
    sentence = capacity_sentence(run)
    if sentence is not None:
        st.markdown(f"**{plain(sentence)}**")
        st.caption("servecap capacity's answer (its probes' early-stopped verdicts, at its "
                   "SLOs); below, this run judged under the sidebar's SLOs.")
    report = plan_runs([run], slo)
    capacity = report.runs[0]
    if capacity.agents is not None:
        st.markdown(f"**{plain(agents_plan_sentence(capacity.name, capacity.agents, slo))}**")
        st.caption("agents levels judged under the sidebar's SLOs: a level passes when its "
                   "whole tasks' task time and its calls' TTFT are within them")
    if capacity.c_max is None and capacity.top_level is None and capacity.verification:
        show_verification(capacity)  # a verify run: its levels are users, not streams
        return
    lines = headline(
        [Held(r.name, r.c_max, r.users, r.latency_mean_s, r.c_max_lower_bound,
              verified=(r.verified_users or 0) if r.verification is not None else None)
         for r in report.runs],
        slo,
    )
    st.markdown(f"**{plain(lines[0])}**")  # the decision first, as in the report
    for line in lines[1:]:
        st.text(line)
    label = "P90" if slo.statistic == "p90" else "mean"
    show_kind_tables(capacity)
    if capacity.top_level is not None or any("goodput_rps" in lv for lv in capacity.levels):
        _rate_capacity(capacity, slo, label)
        return
    c1, c2, c3, c4 = st.columns(4)
    c_max = "none" if capacity.c_max is None else (
        f">= {capacity.c_max}" if capacity.c_max_lower_bound else str(capacity.c_max))
    c1.metric(f"C_max ({label})", c_max)
    users = "none" if capacity.users is None else (
        f">= {capacity.users}" if capacity.c_max_lower_bound else str(capacity.users))
    c2.metric("Users (predicted, Little's law)", users)
    c3.metric("Users (verified, measured)", verified_value(capacity))
    latency = capacity.latency_mean_s
    c4.metric("Mean latency at C_max", f"{latency:.3f} s" if latency is not None else "n/a")
    st.caption(
        f"TTFT <= {slo.ttft_ms:g} ms and TPS >= {slo.tps:g} tok/s on {label}, at this level and "
        f"every lower one; predicted users = C_max x (1 + {slo.think_time_s:g} s / mean "
        "latency); verified users: the largest N virtual users a verify run measured within "
        "the SLOs."
    )
    caption = verified_caption(capacity)
    if caption:
        st.caption(plain(caption))
    st.dataframe(verdict_rows(capacity, slo.statistic), hide_index=True)
    if capacity.c_max is not None:
        verify_form(run, slo)
        verify_agents_form(run, slo)


def show_kind_tables(capacity: RunCapacity) -> None:
    """The tables a level's kind adds of its own (a rate shape's time windows), and the
    prefix cache's per level where the run recorded one."""
    for table in [*(capacity.kind_tables or []), *filter(None, [capacity.prefix_table])]:
        st.markdown(f"**{plain(table.title)}**")
        st.dataframe([dict(zip(table.header, row, strict=True)) for row in table.rows],
                     hide_index=True)
        if table.note:
            st.caption(plain(table.note))


def _rate_capacity(capacity: RunCapacity, slo: SLO, label: str) -> None:
    """An open-loop run's capacity: the top compliant rate, users by N = X (R + Z), goodput."""
    c1, c2, c3 = st.columns(3)
    c1.metric(f"Top rate ({label})", capacity.top_level or "none")
    c2.metric("Users (N = X (R + Z))", capacity.users if capacity.users is not None else "none")
    latency = capacity.latency_mean_s
    c3.metric("Mean latency at the top rate",
              f"{latency:.3f} s" if latency is not None else "n/a")
    st.caption(
        f"TTFT from arrival <= {slo.ttft_ms:g} ms and TPS >= {slo.tps:g} tok/s on {label}, at "
        f"this rate and every lower one; users = rate x (mean latency + {slo.think_time_s:g} s)"
        "; goodput = offered rate x the share of requests that met both SLOs."
    )
    st.dataframe(verdict_rows(capacity, slo.statistic), hide_index=True)


def render_results_page(results: Path, slo: SLO) -> None:
    st.title("Results")
    index = scan_results(results)
    for problem in index.problems:
        st.warning(plain(problem))
    if not index.runs:
        st.info(plain(f"No saved runs in {results} yet: start one on the Run page."))
        return
    run = pick_run(index)
    if run is None:
        return
    _run_header(run)
    if not run.levels:
        st.subheader("Per-level results")
        st.dataframe(level_rows(run.levels), hide_index=True)
        st.warning("This run has no completed level yet.")
        return
    # the answer's first screen, as in the report: the decision (in Capacity), the charts,
    # then the detail (every level's numbers, the prediction beside them, the findings)
    st.subheader("Capacity")
    show_capacity(run, slo)
    st.subheader("Cost")
    show_run_cost(run, slo)
    show_run_energy(run, slo)
    model = report_model([run], slo, title=run.name)
    if model is not None:
        st.subheader("Charts")
        show_charts(model, "results", SINGLE_RUN_CHARTS)
    st.subheader("Per-level results")
    st.dataframe(level_rows(run.levels), hide_index=True)
    st.subheader("Export")
    export_downloads(run)
    if model is None:
        return
    st.subheader("Predicted beside measured")
    model = predict_panel(model)
    st.subheader("Findings")
    show_findings(model)
    st.subheader("Report")
    report_download(model, "results")
