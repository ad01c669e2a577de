"""The app's words for servecap's settings: an error the api raises names a setting
(`SettingError`), and the app shows the label of the field where the user typed it."""

from __future__ import annotations

from servecap.core.errors import said, setting_words

# Where the app's label is not the setting's own words (`think_time` -> "think time").
SETTING_LABELS: dict[str, str] = {
    "base_url": "Base URL", "concurrency": "Concurrency levels", "rate": "Offered rates",
    "duration": "Seconds per rate", "arrival": "Arrivals", "load": "Load",
    "workers": "Worker processes", "trace": "Trace file", "trace_speed": "Trace speeds",
    "trace_format": "Trace format", "trace_duration": "Trace seconds",
    "trace_start": "Trace start (s)", "dataset": "Dataset file",
    "dataset_format": "Dataset format", "input_tokens": "Input tokens",
    "output_tokens": "Output tokens", "model": "Model", "think_time": "Think time",
    "turns": "Turns", "users": "Users", "target": "Targets",
    "task_time_slo_s": "Task time SLO (s)", "max_agents": "Highest agents",
    "agents_duration_s": "Seconds per agents level", "agent_depth": "Tool calls per task",
    "tool_latency": "Tool latency (s)", "agents": "Agents per level",
    "tool_result_tokens": "Tool result tokens", "context_budget": "Context budget",
    "fan_out": "Sub-agents per task", "agent_trace": "Agent trace file (JSONL)",
}


def label_of(setting: str) -> str:
    """The label of the field that sets `setting`, in quotes as the page shows it."""
    return f"'{SETTING_LABELS.get(setting, setting_words(setting))}'"


def message_of(exc: BaseException) -> str:
    """An error's message as the app shows it: settings named by their labels."""
    return said(exc, label_of)
