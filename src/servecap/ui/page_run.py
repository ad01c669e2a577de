"""The Run page: the seed tool's workflow, with live progress from a background run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from servecap.core.errors import UserInputError
from servecap.kinds.open_loop import PROCESSES
from servecap.kinds.registry import KINDS
from servecap.ui.form import (
    DEFAULT_SELECTED,
    LEVEL_CHOICES,
    RunForm,
    build_config,
    fetch_models,
    secrets_for,
)
from servecap.ui.labels import message_of
from servecap.ui.prefix_fields import prefix_fields
from servecap.ui.run_manager import RunJob
from servecap.ui.shared import run_manager, sim_holder
from servecap.ui.sim_holder import TRY_TIME_SCALE
from servecap.ui.tables import level_rows
from servecap.ui.text import plain

AUTO_MODEL = "(first model the server lists)"
DATASET_FORMATS = ["auto", "prompt", "openai", "sharegpt"]
TRACE_FORMATS = ["auto", "mooncake", "azure", "burstgpt"]
CLOSED_MODE = "Concurrency (closed loop)"
OPEN_MODE = "Rate (open loop)"
AGENTS_MODE = "Agents (tool-call loops)"
TEXT_MODE = "Any load kind (as text)"
SERVER_MSG = "server_msg"
POLLING = "polling_job"
POLL_S = 1.0


def _refresh_models() -> None:
    """Callback: load the model list from the server named in the form."""
    state = st.session_state
    try:
        models = fetch_models(state.get("base_url", ""), secrets_for(state.get("api_key", "")))
    except UserInputError as exc:
        state[SERVER_MSG] = ("error", message_of(exc))
        return
    state["models"] = models
    state["model"] = models[0] if models else AUTO_MODEL
    state[SERVER_MSG] = ("ok", f"{len(models)} model(s) served")


def _try_it() -> None:
    """Callback: start the simulator on loopback and point the form at it."""
    holder = sim_holder()
    try:
        url = holder.base_url()
    except (RuntimeError, OSError) as exc:
        st.session_state[SERVER_MSG] = ("error", f"could not start the simulator: {exc}")
        return
    st.session_state["base_url"] = url
    st.session_state["api_key"] = ""
    _refresh_models()
    if st.session_state.get(SERVER_MSG, ("", ""))[0] == "ok":
        st.session_state[SERVER_MSG] = (
            "ok", f"simulator profile '{holder.profile}' running at {url}, at "
                  f"{_pace(holder.time_scale)}",
        )


def _pace(scale: float) -> str:
    """`real time (x1)`, or `x2: 2x real time, times 2x shorter`."""
    if scale == 1:
        return "real time (x1)"
    return f"x{scale:g}: {scale:g}x real time, times {scale:g}x shorter"


def _server_section() -> None:
    st.text_input("Base URL", key="base_url", placeholder="http://127.0.0.1:8000/v1")
    st.text_input("API key", type="password", key="api_key",
                  help="Held in memory for this session only; never saved or shown. "
                       "Leave empty to use $OPENAI_API_KEY.")
    left, right = st.columns(2)
    left.button("Refresh models", on_click=_refresh_models, key="refresh_models")
    right.button(f"Try it: start a simulator ({_pace(TRY_TIME_SCALE)})", on_click=_try_it,
                 key="try_it",
                 help=f"Serves a simulated model on 127.0.0.1 at {_pace(TRY_TIME_SCALE)}, so "
                      "you can run at once; the run's client is a process of its own.")
    message = st.session_state.get(SERVER_MSG)
    if message:
        (st.success if message[0] == "ok" else st.error)(plain(message[1]))
    models = st.session_state.get("models", [])
    st.selectbox("Model", [AUTO_MODEL, *models], key="model")


def _rate_fields() -> tuple[str, str, float]:
    """Open loop: offered rates, the arrival process and seconds of arrivals per rate."""
    rates = st.text_input("Offered rates (requests/s)", key="rates",
                          placeholder="e.g. 0.5, 1, 2, 4")
    c1, c2 = st.columns(2)
    arrival = c1.selectbox("Arrivals", list(PROCESSES), key="arrival")
    duration = c2.number_input("Seconds per rate", 1.0, 86_400.0, RunForm.duration_s,
                               key="duration_s",
                               help="The first and last 5 s of each rate are left out of its "
                                    "statistics (steady-state window).")
    return rates, str(arrival), float(duration)


def _form_fields() -> RunForm:
    mode = st.radio("Load", [CLOSED_MODE, OPEN_MODE, AGENTS_MODE, TEXT_MODE],
                    key="load_mode", horizontal=True)
    levels: list[int] = []
    custom, rates, arrival, duration = "", "", "poisson", RunForm.duration_s
    load_text, find_cmax, agents = "", False, {}
    if mode == OPEN_MODE:
        rates, arrival, duration = _rate_fields()
    elif mode == AGENTS_MODE:
        agents = _agent_fields()
    elif mode == TEXT_MODE:
        examples = ", ".join(k.text.example for k in KINDS.values() if k.text.example)
        load_text = st.text_input("Load", key="load_text", placeholder=examples,
                                  help="PREFIX=SPEC, the levels of any load kind")
    else:
        levels = st.multiselect("Concurrency levels", list(LEVEL_CHOICES),
                                default=list(DEFAULT_SELECTED), key="levels")
        custom = st.text_input("Custom levels", key="custom_levels",
                               placeholder="e.g. 3, 12, 96")
        find_cmax = st.checkbox("Refine C_max", key="find_cmax",
                                help="After the levels, bisect C_max on the integers between "
                                     "the last pass and the first miss (default SLOs)")
    c1, c2, c3 = st.columns(3)
    rounds = c1.number_input("Rounds per level", 1, 100_000, RunForm.rounds, key="rounds")
    tokens_in = c2.number_input("Input tokens", 1, 1_000_000, RunForm.input_tokens,
                                key="input_tokens")
    tokens_out = c3.number_input("Output tokens", 1, 1_000_000, RunForm.output_tokens,
                                 key="output_tokens")
    name = st.text_input("Run name", key="run_name", placeholder="defaults to the model id")
    workers = st.text_input(
        "Worker processes", value=RunForm.workers, key="workers",
        help="auto: one process while one core keeps up, one more per 256 streams; or N",
    )
    source = _source_fields()
    prefix = prefix_fields()
    with st.expander("Deployment notes"):
        engine = st.text_input("Engine", key="engine", placeholder="e.g. vLLM 0.9.1")
        command = st.text_input("Launch command", key="launch_command")
        notes = st.text_area("Notes", key="notes")
    model = st.session_state.get("model")
    return RunForm(
        base_url=st.session_state.get("base_url", ""),
        model=None if model in (None, AUTO_MODEL) else str(model),
        levels=[int(x) for x in levels], custom_levels=custom, rounds=int(rounds),
        input_tokens=int(tokens_in), output_tokens=int(tokens_out), name=name,
        engine=engine, launch_command=command, notes=notes, **source,
        rates=rates if mode == OPEN_MODE else "", arrival=arrival, duration_s=duration,
        workers=workers, load_text=load_text, find_cmax=bool(find_cmax), **prefix, **agents,
    )


def _agent_fields() -> dict[str, Any]:
    """Agents (`run --agents`): agents per level and the shape of their tasks."""
    agents = st.text_input("Agents per level", key="agents", placeholder="e.g. 4, 8, 16",
                           help="Each agent runs tasks: model calls carrying the growing "
                                "context and a tool catalogue, a tool's latency after each "
                                "tool call, then idles before its next task")
    c1, c2, c3 = st.columns(3)
    depth = c1.text_input("Tool calls per task", RunForm.agent_depth, key="agent_depth",
                          help="N, uniform:LO:HI, normal:MEAN:SD or lognormal:MEDIAN:SIGMA")
    tool = c2.text_input("Tool latency (s)", RunForm.tool_latency, key="tool_latency",
                         help="exp:MEAN, fixed:S, lognormal:MEDIAN:SIGMA or uniform:LO:HI")
    result = c3.text_input("Tool result tokens", RunForm.tool_result_tokens,
                           key="tool_result_tokens", help="appended to the context per call")
    d1, d2 = st.columns(2)
    idle = d1.text_input("Think time (idle between tasks)", key="agent_idle",
                         placeholder="the agents' default, exp:10")
    seconds = d2.number_input("Seconds per level", 1.0, 86_400.0, RunForm.agent_duration_s,
                              key="agent_duration_s", help="no task starts after it")
    e1, e2 = st.columns(2)
    budget = e1.text_input("Context budget", key="context_budget", placeholder="none",
                           help="TOKENS[:SUMMARY]: compact a context past TOKENS")
    fan_out = e2.text_input("Sub-agents per task", key="fan_out", placeholder="none",
                            help="spawned by a task's first call, each a chain of its own")
    trace = st.text_input("Agent trace file (JSONL)", key="agent_trace", placeholder="none",
                          help="recorded tasks whose depth, tool latencies and result sizes "
                               "the agents replay (the three fields above then stay unset)")
    return {"agents": agents, "agent_depth": depth, "tool_latency": tool,
            "tool_result_tokens": result, "agent_idle": idle,
            "agent_duration_s": float(seconds), "context_budget": budget, "fan_out": fan_out,
            "agent_trace": trace}


def _source_fields() -> dict[str, Any]:
    """Dataset or trace replay instead of the built-in prompts (paths on this machine)."""
    with st.expander("Dataset or trace (instead of the built-in prompts)"):
        d1, d2 = st.columns([3, 1])
        dataset = d1.text_input("Dataset file (JSONL)", key="dataset",
                                placeholder="prompts.jsonl: prompt, messages or ShareGPT rows")
        dataset_format = d2.selectbox("Dataset format", DATASET_FORMATS, key="dataset_format")
        t1, t2 = st.columns([3, 1])
        trace = t1.text_input("Trace file", key="trace",
                              help="Replays each row at its offset; the levels above are "
                                   "then unused: one level per speed.")
        trace_format = t2.selectbox("Trace format", TRACE_FORMATS, key="trace_format")
        s1, s2 = st.columns(2)
        speeds = s1.text_input("Trace speeds", "1", key="trace_speeds",
                               help="One level per speed, e.g. 0.5, 1, 2")
        duration = s2.number_input("Trace seconds (0: all)", 0.0, 1e7, 0.0,
                                   key="trace_duration")
    return {"dataset": dataset, "dataset_format": dataset_format, "trace": trace,
            "trace_format": trace_format, "trace_speeds": speeds,
            "trace_duration_s": float(duration)}


def _start(form: RunForm, results: Path) -> None:
    try:
        config = build_config(form, results)
        with st.spinner("Checking the server..."):
            run_manager().start(config, secrets_for(st.session_state.get("api_key", "")))
    except UserInputError as exc:
        st.error(plain(f"Not started: {message_of(exc)}"))


def _status_line(job: RunJob) -> None:
    snap = job.progress.snapshot()
    if job.state == "done":
        st.success("Run complete and saved.")
    elif job.state == "cancelled":
        st.warning("Run cancelled: what was measured is kept, marked incomplete.")
    elif job.state == "failed":
        st.error(plain(f"Run stopped: {job.error}"))
    else:
        st.info("Running... (safe to close this tab: the run keeps going and is saved)")
    if snap.run_dir:
        st.text(f"model: {snap.model}\nsaved in: {snap.run_dir}")


def _progress_view() -> None:
    job = run_manager().current
    if job is None:
        return
    st.subheader("Progress")
    _status_line(job)
    snap = job.progress.snapshot()
    fraction = snap.done / snap.total if snap.total else 0.0
    st.progress(min(1.0, fraction), text=f"{snap.done} / {snap.total} requests "
                                         f"({snap.failed} failed)")
    if snap.levels:
        st.dataframe(
            [{"level": lv.level, "done": lv.done, "of": lv.n_requests, "failed": lv.failed}
             for lv in snap.levels],
            hide_index=True,
        )
    if snap.summaries:
        st.text("Completed levels")
        st.dataframe(level_rows(snap.summaries), hide_index=True)
    if job.active:
        st.session_state[POLLING] = job.job_id
        st.button("Cancel run", on_click=job.cancel, key="cancel_run")
    elif st.session_state.get(POLLING) == job.job_id:
        del st.session_state[POLLING]
        if snap.run_dir and job.request.get("kind") != "verify":  # verify: stay on the sweep
            st.session_state["results_run"] = Path(snap.run_dir).name
        st.rerun(scope="app")


_live_progress = st.fragment(run_every=POLL_S)(_progress_view)


def render_run_page(results: Path) -> None:
    st.title("Run a benchmark")
    _server_section()
    form = _form_fields()
    job = run_manager().current
    busy = job is not None and job.active
    if st.button("Start run", type="primary", disabled=busy, key="start_run"):
        _start(form, results)
        job = run_manager().current
    if job is None:
        return
    if job.active:
        _live_progress()
    else:
        _progress_view()
