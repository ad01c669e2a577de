"""The report's "server's view" section: per-level server fields next to the client's, the
state of each run's /metrics scraping (errors counted), and the timeline figures.

Metric text is server-supplied: these are plain strings, escaped by each renderer.
"""

from __future__ import annotations

from typing import Any

from servecap.core.numbers import fmt_number
from servecap.report.model import ReportModel, RunMeta
from servecap.report.timeline import timeline_figure
from servecap.report.views import Table

COLUMNS: tuple[tuple[str, str, int, float], ...] = (
    # header, field, digits, scale
    ("TTFT p90 ms (client)", "ttft_p90_ms", 1, 1.0),
    ("TTFT mean ms (server)", "server_ttft_mean_ms", 1, 1.0),
    ("waiting mean", "server_waiting_mean", 1, 1.0),
    ("waiting max", "server_waiting_max", 0, 1.0),
    ("queued % of level", "server_waiting_share", 0, 100.0),
    ("running max", "server_running_max", 0, 1.0),
    ("KV mean %", "server_kv_usage_mean", 0, 100.0),
    ("KV max %", "server_kv_usage_max", 0, 100.0),
    ("preemptions", "server_preemptions", 0, 1.0),
    ("prefix hit %", "server_prefix_hit_rate", 0, 100.0),
    ("spec acceptance", "server_spec_acceptance", 2, 1.0),
    ("accepted length", "server_spec_accept_length", 2, 1.0),
    ("gen tok/s (server)", "server_generation_tok_s", 0, 1.0),
    ("output tok/s (client)", "output_tok_s", 0, 1.0),
    ("scrape errors", "server_scrape_errors", 0, 1.0),
)


def _has_server(run: RunMeta) -> bool:
    return any(lv.server_scrapes for lv in run.levels)


def _cell(value: Any, digits: int, scale: float) -> str:
    if value is None:
        return fmt_number(None)
    return fmt_number(float(value) * scale, digits)


def server_tables(model: ReportModel) -> list[Table]:
    """One table per run that was scraped."""
    out: list[Table] = []
    for run in model.runs:
        if not _has_server(run):
            continue
        rows = [
            [str(lv.key), *(_cell(getattr(lv, f), d, s) for _, f, d, s in COLUMNS)]
            for lv in sorted(run.levels, key=lambda x: x.key)
        ]
        out.append(Table(title=f"{run.name}: the server's view per level",
                         header=["level", *(h for h, *_ in COLUMNS)], rows=rows))
    return out


def scrape_lines(model: ReportModel) -> list[str]:
    """Per run: how /metrics was scraped, and its errors by kind (never a failed run)."""
    lines: list[str] = []
    for run in model.runs:
        status = run.server_metrics
        if not status:
            lines.append(f"{run.name}: server metrics not recorded (run made before scraping).")
            continue
        if status.get("state") == "off":
            lines.append(f"{run.name}: server metrics off ({status.get('reason') or 'off'}).")
            continue
        errors = status.get("errors") or {}
        told = ", ".join(f"{k} {v}" for k, v in sorted(errors.items())) or "none"
        lines.append(
            f"{run.name}: scraped {status.get('url')} at {status.get('hz')} Hz, "
            f"{status.get('scrapes', 0)} scrapes; scrape errors: {told}."
        )
    return lines


def timeline_figures(model: ReportModel) -> dict[str, dict[str, Any]]:
    """Figure id ("timeline-N", N the run's index) -> plotly figure, for runs with a timeline."""
    return {
        f"timeline-{i}": timeline_figure(run.timeline, f"{run.name}: timeline")
        for i, run in enumerate(model.runs)
        if run.timeline is not None
    }
