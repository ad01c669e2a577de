"""The Capacity page: `servecap capacity` from the app, its probes drawn as they land and the
answer when it is done (the search runs in the app's child process, like every run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from servecap.core.config import SLO
from servecap.core.errors import UserInputError
from servecap.core.summary import LevelSummary
from servecap.storage.capacity_answer import CapacityAnswer, load_answer
from servecap.storage.capacity_targets import load_targets_answer
from servecap.ui.capacity_form import (
    LOADS,
    CapacityForm,
    build_capacity_job,
    build_capacity_targets_job,
    capacity_out_dir,
    target_specs,
)
from servecap.ui.capacity_targets_view import render_targets_answer
from servecap.ui.form import secrets_for
from servecap.ui.labels import message_of
from servecap.ui.run_manager import RunJob
from servecap.ui.shared import run_manager, sim_holder
from servecap.ui.text import plain

POLL_S = 1.0
POLLING = "polling_capacity"
DEFAULTS = CapacityForm(base_url="")
LOAD_LABELS = {"concurrency": "concurrency (closed loop)",
               "rate": "rate (open-loop Poisson arrivals, with goodput)",
               "agents": "agents (concurrent agents within a task-time SLO)"}


def _try_it() -> None:
    """Callback: point the form at the app's simulator on loopback (started if need be)."""
    try:
        st.session_state["cap_base_url"] = sim_holder().base_url()
    except (RuntimeError, OSError) as exc:
        st.session_state["cap_message"] = f"could not start the simulator: {exc}"


def _form() -> CapacityForm:
    st.text_input("Base URL", key="cap_base_url", placeholder="http://127.0.0.1:8000/v1")
    st.button("Try it: start a simulator", on_click=_try_it, key="cap_try_it")
    if st.session_state.get("cap_message"):
        st.error(plain(st.session_state["cap_message"]))
    model = st.text_input("Model", key="cap_model", placeholder="the first model served")
    c1, c2 = st.columns(2)
    tokens_in = c1.number_input("Input tokens", 1, 1_000_000, DEFAULTS.input_tokens,
                                key="cap_input_tokens")
    tokens_out = c2.number_input("Output tokens", 1, 1_000_000, DEFAULTS.output_tokens,
                                 key="cap_output_tokens")
    load = _load_fields()
    c4, c5, c6 = st.columns(3)
    budget = c4.number_input("Time budget (min)", 0.5, 24 * 60.0, DEFAULTS.max_time_min,
                             key="cap_max_time_min")
    verify = c5.checkbox("Run the predicted users", DEFAULTS.verify, key="cap_verify")
    users_s = c6.number_input("Users level seconds", 1.0, 86_400.0, DEFAULTS.users_duration_s,
                              key="cap_users_duration_s")
    name = st.text_input("Deployment name", key="cap_name", placeholder="defaults to the model")
    targets = st.text_area(
        "Targets: several deployments, NAME=BASE_URL a line (instead of the base URL)",
        key="cap_targets", placeholder="a=http://127.0.0.1:8000/v1\nb=http://127.0.0.1:8001/v1",
        help="Each is searched in turn, one probe at a time, and the answer gives the "
             "capacity delta with its interval (as `servecap capacity --target`)")
    return CapacityForm(
        targets=targets,
        base_url=st.session_state.get("cap_base_url", ""), model=model.strip() or None,
        input_tokens=int(tokens_in), output_tokens=int(tokens_out), name=name,
        max_time_min=float(budget), verify=bool(verify), users_duration_s=float(users_s),
        **load,
    )


def _load_fields() -> dict[str, Any]:
    """The load choice, and only the chosen load's own settings (`--load` in the CLI)."""
    load = st.radio("Search", LOADS, key="cap_load", horizontal=True,
                    format_func=LOAD_LABELS.__getitem__)
    if load == "rate":
        c1, c2 = st.columns(2)
        start = c1.number_input("Start rate (requests/s)", 0.001, 1e6, DEFAULTS.start_rate,
                                key="cap_start_rate")
        resolution = c2.number_input("Rate resolution (fraction)", 0.001, 0.999,
                                     DEFAULTS.rate_resolution, key="cap_rate_resolution")
        return {"load": "rate", "start_rate": float(start),
                "rate_resolution": float(resolution)}
    highest = st.number_input("Highest concurrency", 1, 100_000, DEFAULTS.max_concurrency,
                              key="cap_max_concurrency")
    if load == "agents":
        return {"load": "agents", "max_concurrency": int(highest), **_agent_fields()}
    return {"load": "concurrency", "max_concurrency": int(highest)}


def _agent_fields() -> dict[str, Any]:
    """The agents search's own settings (`--load agents`); the idle between tasks is the
    sidebar's think time."""
    c1, c2, c3 = st.columns(3)
    slo = c1.number_input("Task time SLO (s)", 0.001, 86_400.0, DEFAULTS.task_time_slo_s,
                          key="cap_task_time_slo_s",
                          help="the sidebar's statistic (P90 or mean) of a task's time")
    most = c2.number_input("Highest agents", 1, 100_000, DEFAULTS.max_agents,
                           key="cap_max_agents")
    seconds = c3.number_input("Seconds per agents level", 1.0, 86_400.0,
                              DEFAULTS.agents_duration_s, key="cap_agents_duration_s")
    d1, d2 = st.columns(2)
    depth = d1.text_input("Tool calls per task", DEFAULTS.agent_depth, key="cap_agent_depth",
                          help="N, uniform:LO:HI, normal:MEAN:SD or lognormal:MEDIAN:SIGMA")
    tool = d2.text_input("Tool latency (s)", DEFAULTS.tool_latency, key="cap_tool_latency",
                         help="exp:MEAN, fixed:S, lognormal:MEDIAN:SIGMA or uniform:LO:HI")
    return {"task_time_slo_s": float(slo), "max_agents": int(most),
            "agents_duration_s": float(seconds), "agent_depth": depth,
            "tool_latency": tool}


def _start(form: CapacityForm, slo: SLO, results: Path) -> None:
    try:
        specs: list[str] = []
        if target_specs(form):
            config, options, specs = build_capacity_targets_job(form, slo,
                                                                capacity_out_dir(results))
        else:
            config, options = build_capacity_job(form, slo, capacity_out_dir(results))
        with st.spinner("Checking the server..."):
            run_manager().start_capacity(config, options.model_dump(mode="json"),
                                         secrets_for(""), targets=specs)
    except UserInputError as exc:
        st.error(plain(f"Not started: {message_of(exc)}"))


def answer_of(job: RunJob) -> CapacityAnswer | None:
    """The answer a finished capacity job wrote beside its runs' folder (None before)."""
    out_dir = job.request.get("config", {}).get("out_dir")
    return load_answer(Path(out_dir).parent) if out_dir else None


def probe_rows(summaries: list[LevelSummary], slo: SLO) -> list[dict[str, Any]]:
    """The probes measured so far, judged as measured (the search's own verdicts, which
    stop early on bounds, come with the answer)."""
    rows = []
    for summary in summaries:
        ttft = summary.value("ttft", slo.statistic)
        tps = summary.value("tps", slo.statistic)
        held = ttft is not None and tps is not None and ttft <= slo.ttft_ms and tps >= slo.tps
        rows.append({"level": str(summary.key), "requests": summary.n_requests,
                     f"TTFT {slo.statistic} (ms)": ttft, f"TPS {slo.statistic}": tps,
                     "as measured": "within SLOs" if held else "outside SLOs"})
    return rows


def _probe_chart(summaries: list[LevelSummary], slo: SLO) -> None:
    import plotly.graph_objects as go

    ttft = [s.value("ttft", slo.statistic) for s in summaries]
    fig = go.Figure(go.Scatter(
        x=[s.key.value for s in summaries], y=ttft, mode="markers+text",
        text=[str(i + 1) for i in range(len(summaries))], textposition="top center",
        name=f"TTFT {slo.statistic}"))
    fig.add_hline(y=slo.ttft_ms, line_dash="dash", annotation_text="TTFT SLO")
    fig.update_layout(xaxis_title="probe level (numbered in the order run)",
                      yaxis_title=f"TTFT {slo.statistic} (ms)", height=320,
                      margin={"t": 20, "b": 40})
    st.plotly_chart(fig, key=f"capacity-probes-{len(summaries)}")


def _answer_view(job: RunJob) -> None:
    out_dir = job.request.get("config", {}).get("out_dir")
    several = load_targets_answer(Path(out_dir).parent) if out_dir else None
    if several is not None:
        render_targets_answer(several)
        return
    answer = answer_of(job)
    if answer is None:
        if job.state == "failed":
            st.error(plain(f"Search stopped: {job.error}"))
        return
    (st.success if answer.status == "found" else st.warning)(plain(answer.sentence()))
    if answer.agents is not None:
        _agents_metrics(answer)
    shown = {"n_requests", "n_judged", "cropped", "verdict", "ttft_ms", "tps", "reason"}
    if answer.agents is not None:
        shown.add("task_time_s")
    st.dataframe([{"level": row.level(), **row.model_dump(include=shown)}
                  for row in answer.probes], hide_index=True)
    if answer.diagnosis:
        st.info(plain(f"Failures: {answer.diagnosis}"))
    if answer.probe_run:
        st.caption(plain(f"probes: {answer.probe_run}; users: {answer.users_run or 'not run'}; "
                         "both are runs the Results page opens with this answer"))


def _agents_metrics(answer: CapacityAnswer) -> None:
    """The agents answer's two counts side by side, each labelled with where it comes from."""
    agents = answer.agents
    assert agents is not None
    c1, c2 = st.columns(2)
    c1.metric("Agents (verified: a level of N met the SLOs)", str(agents.agents_max or "none"))
    c2.metric("Agents (predicted: streams x agents per stream)",
              str(agents.predicted_agents or "n/a"))
    if agents.predicted_streams is not None:
        bound = ("the task time reaches its SLO there" if agents.predicted_bound == "task time"
                 else "C_max")
        c2.caption(f"at {agents.predicted_streams:g} streams ({bound})")


def _live(slo: SLO) -> None:
    job = run_manager().current
    if job is None or job.request.get("kind") != "capacity":
        return
    snap = job.progress.snapshot()
    if job.active:
        st.info(f"Searching... {snap.done} requests so far ({snap.failed} failed); safe to "
                "close this tab: the search keeps going and is saved")
        st.button("Cancel", on_click=job.cancel, key="cap_cancel")
        st.session_state[POLLING] = job.job_id
    if snap.summaries:
        _probe_chart(snap.summaries, slo)
        st.dataframe(probe_rows(snap.summaries, slo), hide_index=True)
    if not job.active:
        _answer_view(job)
        if st.session_state.get(POLLING) == job.job_id:
            del st.session_state[POLLING]
            st.rerun(scope="app")


_live_view = st.fragment(run_every=POLL_S)(_live)


def render_capacity_page(results: Path, slo: SLO) -> None:
    st.title("Capacity: the answer in one run")
    st.caption("Doubles the concurrency from 1 until a probe misses the sidebar's SLOs, "
               "bisects to the integer, stops each probe once its verdict is decided, then "
               "runs the users Little's law predicts. The same as `servecap capacity`. "
               "Search \"rate\" for the highest open-loop Poisson rate instead, with goodput "
               "beside it (`--load rate`), or \"agents\" for the concurrent agents within a "
               "task-time SLO, predicted and verified (`--load agents`).")
    form = _form()
    job = run_manager().current
    busy = job is not None and job.active
    if st.button("Find capacity", type="primary", disabled=busy, key="start_capacity"):
        _start(form, slo, results)
        job = run_manager().current
    if job is not None and job.active:
        _live_view(slo)
    else:
        _live(slo)
