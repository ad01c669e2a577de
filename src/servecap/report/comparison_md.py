"""The comparison as Markdown: what `report.md` (and `comparison.md`) open with."""

from __future__ import annotations

from servecap.report.charts_compare import COMPARE_CHARTS
from servecap.report.comparison import ComparisonSection
from servecap.report.md_text import md


def comparison_markdown(section: ComparisonSection, depth: int = 1) -> str:
    """Each pair's headline (the users sentence in bold, small-sample warnings beside the
    numbers they concern), then the charts with error bars as PNG links.

    `depth` is the heading level of its title: 1 in `comparison.md`, deeper inside
    `report.md`, where it follows the decision sentence and its chart.
    """
    title, pair_heading = "#" * depth, "#" * (depth + 1)
    out = [f"{title} Comparison headline", "", md(section.setting()), ""]
    for pair in section.pairs:
        out += [f"{pair_heading} {md(pair.b)} vs {md(pair.a)}", ""]
        lead, *rest = pair.lines or []
        if lead is not None:
            out += [f"**{md(lead.text)}**", ""]
        for line in rest:
            out.append(f"- {md(line.text + line.note())}")
        out.append("")
        if pair.verdicts:
            out += [f"Verdicts per level (B = {md(pair.b)}, A = {md(pair.a)}; 95% intervals of "
                    "B - A):", "", "| " + " | ".join(md(h) for h in pair.verdict_header) + " |",
                    "|" + "---|" * len(pair.verdict_header)]
            out += ["| " + " | ".join(md(v) for v in [row.level, *row.cells]) + " |"
                    for row in pair.verdicts]
            out.append("")
    for chart in COMPARE_CHARTS:
        out += [f"![{md(chart.id + ' ' + chart.title)}](charts/{chart.id}-{chart.slug}.png)",
                "", f"*{md(chart.caption)}*", ""]
    out += [f"Method: {md(section.method)}", ""]
    return "\n".join(out) + "\n"
