"""The Capacity page's form as plain data: what `servecap capacity` needs, checked (no Streamlit).

The server and request shape become a `RunConfig` through the Run page's own form rules
(`ui.form.build_config`), the search's settings a `CapacityOptions`: the defaults and cross-
field rules live in those models, and messages name the form's labels, not the CLI's flags.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from servecap.api.capacity.agents_capacity import agent_capacity_fields
from servecap.api.capacity.capacity import CapacityOptions
from servecap.api.capacity.targets import search_budget_s, targets_from
from servecap.api.run.agent_settings import AGENT_DEFAULTS, AgentSettings
from servecap.api.run.run_config import RunConfig
from servecap.core.config import SLO
from servecap.core.errors import SettingError
from servecap.core.validation import user_input_error
from servecap.ui.form import RunForm, build_config

OPTIONS = CapacityOptions()
# The form's labels by the options' field names: a message names what the user sees.
CAPACITY_LABELS = {
    "ttft_slo_ms": "TTFT SLO (sidebar)", "tps_slo": "TPS SLO (sidebar)",
    "think": "think time (sidebar)", "max_time_s": "time budget",
    "max_concurrency": "highest concurrency", "users_duration_s": "users level seconds",
    "users_turns": "turns per user", "confidence": "confidence",
    "start_rate": "start rate", "rate_resolution": "rate resolution", "load": "search",
    "task_time_slo_s": "task time SLO", "max_agents": "highest agents",
    "agents_duration_s": "seconds per agents level",
}
LOADS = ("concurrency", "rate", "agents")


@dataclass
class CapacityForm:
    """What the user typed on the Capacity page (the SLOs come from the sidebar)."""

    base_url: str
    model: str | None = None
    input_tokens: int = RunForm.input_tokens
    output_tokens: int = RunForm.output_tokens
    name: str = ""
    max_time_min: float = OPTIONS.max_time_s / 60
    max_concurrency: int = OPTIONS.max_concurrency
    verify: bool = OPTIONS.verify
    users_duration_s: float = OPTIONS.users_duration_s
    targets: str = ""  # NAME=BASE_URL per line, two or more: instead of the base URL
    # "rate": the open-loop rate instead (the highest concurrency then does not apply)
    load: str = OPTIONS.load
    start_rate: float = OPTIONS.start_rate
    rate_resolution: float = OPTIONS.rate_resolution
    # "agents": the concurrent agents within a task-time SLO (after the concurrency search)
    task_time_slo_s: float = OPTIONS.task_time_slo_s
    max_agents: int = OPTIONS.max_agents
    agents_duration_s: float = OPTIONS.agents_duration_s
    agent_depth: str = AGENT_DEFAULTS.depth
    tool_latency: str = AGENT_DEFAULTS.tool_latency


def capacity_out_dir(results_dir: Path, now: datetime | None = None) -> Path:
    """Where one search goes: its answer at the top, its runs under `runs/` (the app's
    history looks there, and the Results page finds the answer a run belongs to)."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return results_dir / f"capacity-{stamp}"


def build_capacity_job(
    form: CapacityForm, slo: SLO, out_dir: Path
) -> tuple[RunConfig, CapacityOptions]:
    """The run's server and request shape, and the search's options; a problem is one
    `UserInputError` naming the form's field, raised before any load."""
    run_form = RunForm(base_url=form.base_url, model=form.model, levels=[1],
                       input_tokens=form.input_tokens, output_tokens=form.output_tokens,
                       name=form.name)
    config = build_config(run_form, out_dir / "runs")
    try:
        options = CapacityOptions.model_validate(dict(
            ttft_slo_ms=slo.ttft_ms, tps_slo=slo.tps, statistic=slo.statistic,
            think=_think_text(slo.think_time_s), verify=form.verify,
            users_duration_s=form.users_duration_s, max_time_s=form.max_time_min * 60,
            **_load_fields(form, _think_text(slo.think_time_s)),
        ))
    except ValidationError as exc:
        raise user_input_error(exc, CAPACITY_LABELS, whole="form") from None
    return config, options


def _load_fields(form: CapacityForm, think: str) -> dict[str, object]:
    """The load's own fields: the page shows only those of the load chosen, so the other
    load's (left at their defaults in the form) are not sent. The agents' idle between
    tasks is the sidebar's think time (its default: the agents' own)."""
    if form.load == "agents":
        given = {"task_time_slo_s": form.task_time_slo_s, "max_agents": form.max_agents,
                 "agents_duration_s": form.agents_duration_s}
        task = AgentSettings(None, form.agent_depth, form.tool_latency)
        return {"load": "agents", "max_concurrency": form.max_concurrency,
                **agent_capacity_fields("agents", given, task, "chat", think, 0)}
    if form.load == "rate":
        return {"load": "rate", "start_rate": form.start_rate,
                "rate_resolution": form.rate_resolution}
    return {"load": form.load, "max_concurrency": form.max_concurrency}


def _think_text(mean_s: float) -> str:
    """The sidebar's mean think time as the users' distribution (exponential, as the seed's
    tool and `servecap capacity` assume; none at 0)."""
    return f"exp:{mean_s:g}" if mean_s > 0 else "0"


def target_specs(form: CapacityForm) -> list[str]:
    """The form's targets, one `NAME=BASE_URL` a line (blank lines skipped)."""
    return [line.strip() for line in form.targets.splitlines() if line.strip()]


def build_capacity_targets_job(
    form: CapacityForm, slo: SLO, out_dir: Path
) -> tuple[RunConfig, CapacityOptions, list[str]]:
    """As `build_capacity_job` for two or more targets (`servecap capacity --target`):
    the request shape and options, and the targets, checked before any load."""
    specs = target_specs(form)
    if form.base_url.strip():
        raise SettingError("{target} names each server: clear the {base_url}, or the "
                           "targets", "target", "base_url")
    targets = targets_from(specs)
    # each target replaces the server: the shape's own URL only has to be valid
    first = next((t.base_url for t in targets if t.base_url), "http://127.0.0.1:8000/v1")
    config, options = build_capacity_job(replace(form, base_url=first), slo, out_dir)
    search_budget_s(options, len(targets))
    return config, options, specs
