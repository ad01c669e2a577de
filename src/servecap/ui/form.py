"""The Run page's form as plain data: validation and the `RunConfig` it builds (no Streamlit)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from servecap.api.run.agent_settings import AGENT_DEFAULTS, AgentSettings
from servecap.api.run.load_settings import LoadSettings, load_fields
from servecap.api.run.models import list_served_models
from servecap.api.run.run import Secrets
from servecap.api.run.run_config import RunConfig
from servecap.api.run.run_workers import parse_workers
from servecap.api.run.workload_options import WorkloadFlags, check_source
from servecap.core.config import ClientOptions, FindCmax, parse_levels, validate_base_url
from servecap.core.errors import UserInputError
from servecap.core.validation import user_input_error
from servecap.kinds.open_loop import DEFAULT_DURATION_S

# The seed tool's concurrency choices.
LEVEL_CHOICES: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
DEFAULT_SELECTED: tuple[int, ...] = (1, 2, 4, 8)
RUN_DEFAULTS = RunConfig()

# The form's labels, by the config's field names: validation messages name what the user sees.
FORM_LABELS = {
    "rounds": "rounds per level", "input_tokens": "input tokens",
    "output_tokens": "output tokens", "name": "run name", "concurrency": "concurrency levels",
    "find_cmax": "refine C_max", "load": "load",
    "reset_prefix_cache": "prefix-cache reset",
}


@dataclass
class RunForm:
    """What the user typed on the Run page. The API key is not part of it."""

    base_url: str
    model: str | None = None
    levels: list[int] = field(default_factory=lambda: list(DEFAULT_SELECTED))
    custom_levels: str = ""
    rounds: int = RUN_DEFAULTS.rounds
    input_tokens: int = RUN_DEFAULTS.input_tokens
    output_tokens: int = RUN_DEFAULTS.output_tokens
    name: str = ""
    engine: str = ""
    launch_command: str = ""
    notes: str = ""
    # what to send instead of the built-in prompts (empty: the built-in prompts)
    dataset: str = ""
    dataset_format: str = "auto"
    trace: str = ""
    trace_format: str = "auto"
    trace_speeds: str = "1"
    trace_duration_s: float = 0.0  # 0: the whole trace
    # Open loop: offered rates (requests/s, "0.5, 1, 2"); empty keeps the closed loop above.
    rates: str = ""
    arrival: str = "poisson"
    duration_s: float = DEFAULT_DURATION_S
    # worker processes a level is split over: "auto" (one while one core keeps up) or N
    workers: str = "auto"
    # Any load kind by its text form (`users=50,100`, `shape=ramp:1:20:60s`); empty: the
    # levels or rates above.
    load_text: str = ""
    # Agents (`--agents`): agents per level ("4, 8, 16"); empty: not agents. The task's
    # shape as the CLI's flags; empty idle: the agents' own, empty budget/fan-out: none.
    agents: str = ""
    agent_depth: str = AGENT_DEFAULTS.depth
    tool_latency: str = AGENT_DEFAULTS.tool_latency
    tool_result_tokens: str = AGENT_DEFAULTS.tool_result_tokens
    agent_idle: str = ""
    agent_duration_s: float = AGENT_DEFAULTS.duration_s
    context_budget: str = ""
    fan_out: str = ""
    agent_trace: str = ""  # a JSONL trace whose tasks' shapes the agents replay
    # after the concurrency levels, bisect C_max on the integers (`--find-cmax`)
    find_cmax: bool = False
    # the prefix cache: prompts built for a hit rate (None: not), the reset before each level
    prefix_hit_rate: float | None = None
    reset_prefix_cache: str = RUN_DEFAULTS.reset_prefix_cache


def workload_flags(form: RunForm) -> WorkloadFlags:
    """The form's dataset and trace fields as the run options the CLI's flags give."""
    return WorkloadFlags(
        input_tokens=str(form.input_tokens), output_tokens=str(form.output_tokens),
        dataset=form.dataset.strip() or None, dataset_format=form.dataset_format,
        trace=form.trace.strip() or None, trace_format=form.trace_format,
        trace_speed=form.trace_speeds.strip() or "1",
        trace_duration=form.trace_duration_s or None,
        prefix_hit_rate=form.prefix_hit_rate,
    )


def load_settings_of(form: RunForm) -> LoadSettings:
    """The form's load as the settings the run takes (the api holds their rules): the load
    text, the offered rates, the trace, or else the closed levels picked."""
    load = form.load_text.strip() or None
    rate = form.rates.strip() or None
    if form.agents.strip():
        return _agents_settings(form)
    closed = load is None and rate is None and not form.trace.strip()
    return LoadSettings(
        workload_flags(form), load=load, rate=rate,
        concurrency=",".join(map(str, chosen_levels(form))) if closed else None,
        arrival=form.arrival if rate else "poisson",
        duration=form.duration_s if rate else None,
    )


def _agents_settings(form: RunForm) -> LoadSettings:
    """The agents' levels and task shape as the run's settings (their rules: the api's)."""
    agent = AgentSettings(
        agents=form.agents.strip(), agent_depth=form.agent_depth.strip(),
        tool_latency=form.tool_latency.strip(),
        tool_result_tokens=form.tool_result_tokens.strip(),
        context_budget=form.context_budget.strip() or None,
        fan_out=form.fan_out.strip() or None, agent_trace=form.agent_trace.strip() or None)
    # an empty idle leaves the sessions' default, which the agents read as their own
    return LoadSettings(workload_flags(form), agent=agent, duration=form.agent_duration_s,
                        think_time=form.agent_idle.strip() or LoadSettings.think_time)


def chosen_levels(form: RunForm) -> list[int]:
    """The picked seed choices plus any custom values; at least one."""
    custom = parse_levels(form.custom_levels) if form.custom_levels.strip() else []
    levels = sorted({*form.levels, *custom})
    if not levels:
        raise UserInputError("pick at least one concurrency level (or type custom levels)")
    return levels


def deployment_notes(form: RunForm) -> str | None:
    """Engine, launch command and free notes as one stored text (None when all empty)."""
    parts = [
        f"engine: {form.engine.strip()}" if form.engine.strip() else "",
        f"launch command: {form.launch_command.strip()}" if form.launch_command.strip() else "",
        form.notes.strip(),
    ]
    text = "\n".join(p for p in parts if p)
    return text or None


def build_config(form: RunForm, results_dir: Path) -> RunConfig:
    """A validated `RunConfig`; every problem is a `UserInputError` with one clear message."""
    if not form.base_url.strip():
        raise UserInputError(f"enter the server's base URL, e.g. {RUN_DEFAULTS.client.base_url}")
    base_url = validate_base_url(form.base_url)
    settings = load_settings_of(form)
    fields = load_fields(settings)
    levels = (parse_levels(settings.concurrency) if settings.concurrency
              else list(RUN_DEFAULTS.concurrency))
    fields["workers"] = parse_workers(form.workers)
    if form.find_cmax:
        fields["find_cmax"] = FindCmax()
    try:
        config = RunConfig(
            name=form.name.strip() or None,
            model=form.model or None,
            concurrency=levels,
            rounds=form.rounds,
            out_dir=str(results_dir),
            client=ClientOptions(base_url=base_url),
            notes=deployment_notes(form),
            reset_prefix_cache=form.reset_prefix_cache.strip() or "off",
            **fields,
        )
    except ValidationError as exc:
        raise user_input_error(exc, FORM_LABELS, whole="form") from None
    check_source(config)  # a malformed dataset is named here, before the run starts
    return config


def secrets_for(api_key: str) -> Secrets:
    """The key typed in the password field, else the environment's (never stored)."""
    if api_key.strip():
        return Secrets(api_key=api_key.strip())
    return Secrets.from_env(ClientOptions().api_key_env)


def fetch_models(base_url: str, secrets: Secrets) -> list[str]:
    """Model ids from the server's `/models` (a `UserInputError` when unreachable)."""
    return list_served_models(base_url, secrets.http_headers())
