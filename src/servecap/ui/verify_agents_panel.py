"""The Results page's agents verification: start `verify --load agents` on a sweep.

Under the sidebar's SLOs (the task time among them), the form takes the agents' task shape
and how far to search, checks it by the api's rules before anything runs, and starts the
verify run from a child process like any app run (`run_manager.start_verify_agents`). The
outcome shows on the verify run's Results page: the agents it holds, verified, with the
prediction beside them (`storage.agents_verification`).
"""

from __future__ import annotations

import streamlit as st

from servecap.api.predict.verify_agents import AgentsVerifyOptions
from servecap.api.run.agent_settings import AGENT_DEFAULTS, AgentSettings, agents_load
from servecap.core.config import SLO
from servecap.core.errors import UserInputError
from servecap.storage.run_dir import Run
from servecap.ui.form import secrets_for
from servecap.ui.labels import message_of
from servecap.ui.shared import run_manager
from servecap.ui.text import plain

SECONDS_PER_LEVEL = 60.0


def verify_agents_form(run: Run, slo: SLO) -> None:
    """Start an agents verify run of this sweep under the sidebar's SLOs."""
    with st.expander("Verify agents (run N concurrent agents within the task-time SLO)"):
        c1, c2, c3 = st.columns(3)
        depth = c1.text_input("Tool calls per task", AGENT_DEFAULTS.depth, key="va_depth")
        latency = c2.text_input("Tool latency (s)", AGENT_DEFAULTS.tool_latency,
                                key="va_tool_latency")
        idle = c3.text_input("Idle between tasks (s)", AGENT_DEFAULTS.idle, key="va_idle")
        d1, d2, d3 = st.columns(3)
        duration = d1.number_input("Seconds per level", 1.0, 86_400.0, SECONDS_PER_LEVEL,
                                   key="va_duration")
        budget = d2.number_input("Most levels", 1, 64, AgentsVerifyOptions(slo=slo).budget,
                                 key="va_budget")
        search = d3.checkbox("Search on past a prediction that holds", key="va_search")
        st.caption(f"Judged on {slo.statistic.upper()} task time <= {slo.task_time_s:g} s and "
                   f"{slo.statistic.upper()} TTFT <= {slo.ttft_ms:g} ms per call (the "
                   "sidebar's); the first level runs C_max agents, the next the predicted N.")
        job = run_manager().current
        busy = job is not None and job.active
        if st.button("Start agents verify run", disabled=busy, key="start_verify_agents"):
            shape = AgentSettings("1", depth, latency, AGENT_DEFAULTS.tool_result_tokens)
            options = AgentsVerifyOptions(slo=slo, search=search, budget=int(budget))
            _start(run, shape, idle, float(duration), options)


def _start(
    run: Run, shape: AgentSettings, idle: str, duration: float, options: AgentsVerifyOptions,
) -> None:
    try:
        task = agents_load(shape, "chat", idle, 0.0, duration, 0)
        assert task is not None  # `shape` names its agents
        with st.spinner("Checking the sweep and the server..."):
            run_manager().start_verify_agents(
                run.path, task.model_dump(mode="json"), options.model_dump(mode="json"),
                secrets_for(st.session_state.get("api_key", "")))
    except UserInputError as exc:
        st.error(plain(f"Not started: {message_of(exc)}"))
        return
    st.success("Agents verify run started: its progress is on the Run page; its agents "
               "show on its own Results page when it ends.")
