"""Compare page: start an interleaved comparison and read its headline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st
from pydantic import ValidationError

from servecap.api.comparison.config import (
    DEFAULT_COMPARE_LEVELS,
    DEFAULT_REPEATS,
    CompareConfig,
    compare_workload,
)
from servecap.api.comparison.report import find_comparison, report_runs, section_of
from servecap.api.comparison.store import is_comparison
from servecap.api.comparison.targets import build_targets
from servecap.api.run.load_settings import LoadSettings
from servecap.api.run.run_config import RunConfig
from servecap.api.run.run_workers import parse_workers
from servecap.api.run.workload_options import WorkloadFlags
from servecap.core.config import SLO
from servecap.core.errors import UserInputError
from servecap.core.validation import user_input_error
from servecap.kinds.registry import KINDS
from servecap.report.charts_compare import section_charts
from servecap.report.charts_plotly import figure
from servecap.ui.compare_jobs import CompareJobs
from servecap.ui.cost_panel import cost_inputs
from servecap.ui.form import RunForm
from servecap.ui.labels import message_of
from servecap.ui.prefix_fields import prefix_fields
from servecap.ui.text import plain

RUN_DEFAULTS = RunConfig()


@st.cache_resource
def compare_jobs() -> CompareJobs:
    return CompareJobs()


def _form(results: Path, slo: SLO) -> None:
    with st.form("compare-form"):
        targets = st.text_area(
            "Targets, one per line: NAME=BASE_URL or NAME=sim:PROFILE",
            "slow=sim:deterministic*1.1\nfast=sim:deterministic", key="compare_targets",
        )
        levels = st.text_input("Concurrency levels", ",".join(map(str, DEFAULT_COMPARE_LEVELS)),
                               key="compare_levels")
        examples = ", ".join(k.text.example for k in KINDS.values() if k.text.example)
        load = st.text_input("Or any load kind, as text", key="compare_load",
                             placeholder=examples,
                             help="PREFIX=SPEC (e.g. rate=1,2 or users=10,20); the "
                                  "concurrency levels are then unused")
        repeats = st.number_input("Repeats", 1, 20, DEFAULT_REPEATS, key="compare_repeats")
        rounds = st.number_input("Rounds", 1, 1000, RUN_DEFAULTS.rounds, key="compare_rounds")
        tokens = st.number_input("Output tokens", 1, 100_000, RUN_DEFAULTS.output_tokens,
                                 key="compare_tokens")
        allow = st.checkbox("Allow different models", key="compare_allow")
        workers = st.text_input("Worker processes per target", RunForm.workers,
                                key="compare_workers",
                                help="auto: one process while one core keeps up; or N")
        prefix = prefix_fields("compare_")
        start = st.form_submit_button("Start comparison")
    if not start:
        return
    try:
        specs = [line.strip() for line in targets.splitlines() if line.strip()]
        workload = _workload(levels, load, int(rounds), int(tokens), prefix, results)
        workload = workload.model_copy(update={"workers": parse_workers(workers)})
        config = CompareConfig(build_targets(specs), workload, int(repeats), allow, slo)
    except UserInputError as exc:
        st.error(plain(message_of(exc)))
        return
    compare_jobs().start(config)


def _workload(levels: str, load: str, rounds: int, tokens: int, prefix: dict[str, Any],
              results: Path) -> RunConfig:
    """What every target runs, by the run's own load rules (`api.run.load_settings`)."""
    settings = LoadSettings(
        WorkloadFlags(input_tokens=str(RUN_DEFAULTS.input_tokens), output_tokens=str(tokens),
                      prefix_hit_rate=prefix["prefix_hit_rate"]),
        load=load.strip() or None, concurrency=None if load.strip() else levels)
    try:
        return compare_workload(settings, rounds=rounds, out_dir=str(results),
                                reset_prefix_cache=prefix["reset_prefix_cache"] or "off")
    except ValidationError as exc:
        raise user_input_error(exc, {"reset_prefix_cache": "reset URL"}, whole="form") from None


def _headline(comp_dir: Path, slo: SLO) -> None:
    """The comparison's headline as the report leads with it, then its error-bar charts."""
    try:
        runs = report_runs([comp_dir])
        found = find_comparison([comp_dir], runs, slo)
    except UserInputError as exc:
        st.error(plain(message_of(exc)))
        return
    if found is None or not found.pairs:
        st.info("This comparison has no finished pair yet.")
        return
    st.caption("GPUs and price (each target's stored ones count where these are empty):")
    section = section_of(found, runs, slo, cost_inputs("compare-cost"))
    st.caption(plain(section.setting()))
    for pair in section.pairs:
        st.markdown(f"**{plain(pair.b)} vs {plain(pair.a)}**")
        lead, *rest = pair.lines
        st.markdown(f"**{plain(lead.text)}**")
        for line in rest:
            st.markdown(f"- {plain(line.text + line.note())}")
    charts = section_charts(section)
    for tab, chart in zip(st.tabs([c.info.title for c in charts]), charts, strict=True):
        with tab:
            st.plotly_chart(figure(chart), key=f"compare-{comp_dir.name}-{chart.info.id}")
            st.caption(chart.info.caption)


def render_compare_page(results: Path, slo: SLO) -> None:
    st.header("Compare")
    _form(results, slo)
    job = compare_jobs().latest()
    if job is not None and job.state == "running":
        st.info("comparison running (interleaved slots); refresh to see it finish")
    elif job is not None and job.state == "failed":
        st.error(f"comparison failed: {job.error}")
    found = sorted((p for p in results.glob("compare-*") if is_comparison(p)), reverse=True)
    if not found:
        st.info("No comparisons yet: start one above, or run `servecap compare`.")
        return
    pick = st.selectbox("Comparison", [p.name for p in found], key="compare_pick")
    _headline(results / pick, slo)
