"""`report.md`: the same content for a repository or wiki, charts as PNG links.

Server and user text is escaped twice over: HTML special characters become entities (so a
renderer that allows inline HTML shows them as text) and Markdown punctuation is
backslash-escaped (so no link, image or emphasis can be formed from it); see `md_text.md`.
"""

from __future__ import annotations

import html

from servecap.analysis import Finding
from servecap.report import views
from servecap.report.comparison_md import comparison_markdown
from servecap.report.cost_views import cost_tables
from servecap.report.energy_views import energy_tables
from servecap.report.kind_views import kind_chart_ids, kind_tables
from servecap.report.md_text import md
from servecap.report.model import ReportModel
from servecap.report.predicted_views import predicted_tables
from servecap.report.prefix_section import prefix_note, prefix_tables
from servecap.report.server_section import scrape_lines, server_tables
from servecap.report.uncertainty import uncertainty_tables


def _table(t: views.Table) -> list[str]:
    lines = [
        f"**{md(t.title)}**",
        "",
        "| " + " | ".join(md(h) for h in t.header) + " |",
        "|" + "---|" * len(t.header),
    ]
    lines += ["| " + " | ".join(md(v) for v in row) + " |" for row in t.rows]
    return [*lines, ""]


def _findings(items: list[Finding]) -> list[str]:
    return [*(f"- {md(f.text)}" for f in items), ""]


def _chart(model: ReportModel, chart_id: str) -> list[str]:
    c = next(x for x in model.charts if x.id == chart_id)
    name = f"charts/{c.id}-{c.slug}"
    return [
        f"![{md(c.id + ' ' + c.title)}]({name}.png)",
        "",
        f"*{md(c.caption)}* [interactive](report.html#chart-{c.id})",
        "",
    ]


def _section(title: str, model: ReportModel, chart_id: str | None, key: str) -> list[str]:
    out = [f"## {title}", ""]  # our own section titles: nothing to escape
    if chart_id:
        out += _chart(model, chart_id)
    return out + _findings(model.analysis.section(key))


def render_markdown(model: ReportModel) -> str:
    """The report as Markdown text."""
    a, lv = model.analysis, model.analysis.levels
    out = [
        f"# {md(model.title)}",
        "",
        # our own words go in as written; only run names (user text) are escaped
        f"Generated {md(model.generated_at)} by servecap {md(model.tool_version)} from "
        f"{_count(len(model.runs), 'run')}: {', '.join(md(c) for c in model.configs)}.",
        "",
        "## 1. Executive summary",
        "",
        # the answer's first screen: the decision, one chart, then the comparison (if any)
        *_headline(model),
        *_chart(model, "06"),
        *_comparison(model),
        *_table(views.recommendation_table(model)),
        *_findings(model.summary),
        *_chart(model, "10"),
        "## 2. Setup and methodology",
        "",
        "| item | value |",
        "|---|---|",
        *(f"| {md(k)} | {md(v)} |" for k, v in model.methodology),
        "",
        "## 3. Deployment configurations",
        "",
    ]
    diff, full = views.deployment_tables(model)
    out += (
        _table(diff) + _table(full)
        if model.deployment.keys
        else ["The runs record no deployment metadata.", ""]
    )
    for name, cmd in model.deployment.commands.items():
        out += [f"**{md(name)}**", "", f"<pre>{html.escape(cmd, quote=True)}</pre>", ""]
    out += ["## 4. Results at the lowest and highest level", ""]
    for c in dict.fromkeys((lv[0], lv[-1])):
        out += _table(views.overview(model, c))
    for title, chart_id, key in (
        ("5. TTFT", "01", "ttft"),
        ("6. ITL", "02", "itl"),
        ("7. TPS per user", "03", "tps"),
        ("8. Latency", "04", "latency"),
        ("9. Throughput", "05", "throughput"),
    ):
        out += _section(title, model, chart_id, key)
    if any(c.id == "13" for c in model.charts):
        out += ["### Open loop: against offered rate", ""]
        for chart_id in ("13", "14", "15", "16"):
            out += _chart(model, chart_id)
    kind_ids, kind_views = kind_chart_ids(model), kind_tables(model.runs, model.options.slo)
    if kind_ids or kind_views:
        out += ["### Over the level: each load kind's own views", ""]
        out += [line for chart_id in kind_ids for line in _chart(model, chart_id)]
        out += [line for t in kind_views for line in _table(t)]
    out += _section("10. Aggregate output", model, "07", "aggregate")
    out += _table(views.aggregate_table(model))
    out += ["### Lengths sent and served", "", *_chart(model, "11"), *_chart(model, "12")]
    out += _section("11. Speedup and break-even", model, "08", "speedup")
    out += _table(views.speedup_table(model)) if a.speedups else []
    out += _section("12. SLO compliance and capacity", model, "09", "slo")
    out += [*_table(views.slo_table(model, "p90")), *_table(views.slo_table(model, "mean"))]
    out += [
        "Chart 06 (C_max and users) opens the executive summary.",
        "",
        *_table(views.capacity_table(model, "p90")),
        *_table(views.capacity_table(model, "mean")),
        *(line for t in [*cost_tables(model), *energy_tables(model)] for line in _table(t)),
        *(line for t in uncertainty_tables(model) for line in _table(t)),
        *(line for t in predicted_tables(model.predicted) for line in _table(t)),
        *_findings(a.section("capacity")),
    ]
    out += _section("13. Consistency check", model, None, "consistency")
    out += _table(views.consistency_table(model))
    out += ["## 14. The server's view", "", *(f"- {md(x)}" for x in scrape_lines(model)), ""]
    out += _findings(a.section("server"))
    for t in [*server_tables(model), *prefix_tables(model)]:
        out += _table(t)
    if note := prefix_note(model):
        out += [md(note), ""]
    out += [
        "## 15. How to read the numbers",
        "",
        *_reading(model),
        "## 16. Appendix: tables per configuration",
        "",
        *_imported_note(model),
    ]
    for t in views.appendix_tables(model):
        out += _table(t)
    return "\n".join(out) + "\n"


def _comparison(model: ReportModel) -> list[str]:
    if model.comparison is None:
        return []
    return [comparison_markdown(model.comparison, depth=3), "### Every deployment on its own", ""]


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _headline(model: ReportModel) -> list[str]:
    """The decision first: one paragraph per statistic, the report's own statistic first."""
    out: list[str] = [f"**{md(sentence)}**\n" for sentence in model.capacity]
    for lines in model.headline.values():
        out += [f"**{md(lines[0])}**", *(md(line) for line in lines[1:]), ""]
    return out


def _reading(model: ReportModel) -> list[str]:
    lines = [
        "Closed loop: c streams each send their next request when the last one ends.",
        "Fixed workload: the same prompt and output length for every request.",
        "P90 is the bad tail (TPS: the 10th percentile) for servecap's own runs.",
        f"Users use an assumed think time of {model.options.slo.think_time_s:g} s; "
        "a relative ranking, not a promise.",
        *(f.text for f in model.analysis.section("data")),
    ]
    return [*(f"- {md(x)}" for x in lines), ""]


def _imported_note(model: ReportModel) -> list[str]:
    peers = [f"- {md(f'{run.name}: {run.imported_label}; ' + '; '.join(run.notes))}"
             for run in model.runs if run.imported]
    if not model.analysis.imported:
        return [*peers, ""] if peers else []
    names = ", ".join(model.analysis.imported)
    return [*peers, md(f"Imported runs ({names}): values as published. "
               "Their tps_p90 may be the upper 90th percentile and their rps one stream's rate "
               "(the publishing tool's definitions, not servecap's); servecap's system "
               "throughput is in tables/combined.csv (system_rps)."), ""]
