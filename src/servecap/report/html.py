"""`report.html`: one self-contained page (plotly inlined once, no network), jinja2-escaped."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from servecap.core.summary import LevelSummary
from servecap.core.text import clean_text, clean_tree
from servecap.kinds.registry import kind_of
from servecap.report import views
from servecap.report.cost_views import cost_tables
from servecap.report.energy_views import energy_tables
from servecap.report.kind_views import kind_chart_ids, kind_tables
from servecap.report.model import ReportModel
from servecap.report.predicted_views import predicted_tables
from servecap.report.prefix_section import prefix_note, prefix_tables
from servecap.report.server_section import scrape_lines, server_tables, timeline_figures
from servecap.report.uncertainty import uncertainty_tables
from servecap.stats.capacity import ttft_metric

_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _clean_value(value: Any) -> Any:
    """A rendered value with no raw control character (server text from older runs too);
    markup the page builds itself (`Markup`) is left alone."""
    if isinstance(value, str) and not hasattr(value, "__html__"):
        return clean_text(value)
    return value


def script_json(value: Any) -> str:
    """JSON that is safe inside a <script> element: it cannot close the tag or open a comment."""
    text = json.dumps(clean_tree(value), separators=(",", ":"), allow_nan=False)
    for raw, escaped in _JSON_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text


def _ttft(level: LevelSummary, stat: str) -> float | None:
    return level.value(ttft_metric(level, stat), stat)


def page_data(model: ReportModel, figures: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What the page's script needs: figures, per-level SLO inputs and the default SLO."""
    slo = model.options.slo
    configs = [
        {
            "name": run.name,
            "levels": [
                {
                    "c": lv.key.value,
                    # an open loop is judged on TTFT from arrival, as `servecap plan` does
                    "rate": kind_of(lv.key).offered_rate(lv.key) is not None,
                    "ttft_p90": _ttft(lv, "p90"),
                    "ttft_mean": _ttft(lv, "mean"),
                    "tps_p90": lv.tps_p90,
                    "tps_mean": lv.tps_mean,
                    "latency_mean": lv.latency_mean_s,
                    "error_rate": lv.error_rate,
                }
                for lv in sorted(run.levels, key=lambda x: x.key)
            ],
        }
        for run in model.runs
    ]
    return {
        "figures": figures,
        "configs": configs,
        "levels": [key.value for key in model.analysis.levels],
        "slo": {
            "ttft": slo.ttft_ms,
            "tps": slo.tps,
            "stat": slo.statistic,
            "think": slo.think_time_s,
        },
    }


def _views(model: ReportModel) -> dict[str, Any]:
    levels = model.analysis.levels
    diff, full = views.deployment_tables(model)
    return {
        "recommendations": views.recommendation_table(model),
        "deploy_diff": diff,
        "deploy_all": full,
        "overview": [views.overview(model, c) for c in dict.fromkeys((levels[0], levels[-1]))],
        "aggregate": views.aggregate_table(model),
        "speedup": views.speedup_table(model),
        "slo": [views.slo_table(model, s) for s in ("p90", "mean")],
        "capacity": [
            *(views.capacity_table(model, s) for s in ("p90", "mean")),
            *cost_tables(model),
            *energy_tables(model),
            *uncertainty_tables(model),
            *predicted_tables(model.predicted),
        ],
        "consistency": views.consistency_table(model),
        "appendix": views.appendix_tables(model),
        "server": server_tables(model),
        "prefix": prefix_tables(model),
        "prefix_note": prefix_note(model),
        "kind_tables": kind_tables(model.runs, model.options.slo),
        "kind_charts": kind_chart_ids(model),
        "scrapes": scrape_lines(model),
        "timelines": [k for k in timeline_figures(model)],
    }


def render_html(model: ReportModel, figures: dict[str, dict[str, Any]]) -> str:
    """The page as text; `figures` maps chart id ("01".."10") to its plotly figure dict."""
    import jinja2
    from plotly.offline import get_plotlyjs

    templates = resources.files("servecap.report") / "templates"
    # finalize: every value the page shows, escaped for HTML after its controls are
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined,
                             finalize=_clean_value)
    template = env.from_string((templates / "report.html.j2").read_text(encoding="utf-8"))
    page_js = (templates / "report.js").read_text(encoding="utf-8")
    return template.render(
        model=model,
        views=_views(model),
        charts={c.id: c for c in model.charts},
        data_json=script_json(page_data(model, figures)),
        plotly_js=get_plotlyjs().replace("</script", "<\\/script"),
        page_js=page_js,
        # SLO marks (TTFT, then TPS) -> the live table's colours, for the static tables too
        marks_class={"✓✓": "ok", "✓✗": "half", "✗✓": "half", "✗✗": "bad"},
    )
