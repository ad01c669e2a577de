"""Static charts: each `Chart` as a PNG drawn with matplotlib's Agg backend."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from servecap.core.text import printable
from servecap.report.chart_data import Chart, Trace
from servecap.report.charts_plotly import PALETTE
from servecap.storage.safe_files import atomic_file

DPI = 100


def _text(value: object) -> str:
    """Run names and labels as plain text: control characters escaped (server- and
    user-supplied names are data, and no font has a glyph for ESC), and `$` too, which would
    start matplotlib's math text (on for the log axes' tick labels such as 10^2)."""
    return printable(value).replace("$", r"\$")


def _draw_lines(ax: Any, chart: Chart, legend: bool = True) -> None:
    for t in chart.traces:
        pts = [(x, y) for x, y in zip(t.x, t.y, strict=True) if y is not None]
        if not pts:
            continue
        xs, ys = zip(*pts, strict=True)
        ax.plot(
            xs,
            ys,
            marker="o",
            markersize=3,
            label=_text(t.name),
            linestyle="--" if t.dash else "-",
            color=PALETTE[t.color_index % len(PALETTE)],
        )
        _error_bars(ax, t, list(range(len(t.x))), list(t.x))
    if chart.log_x:
        ticks = sorted({float(v) for t in chart.traces for v in t.x if isinstance(v, int | float)})
        ax.set_xscale("log", base=2)
        if ticks:
            ax.set_xticks(ticks, [f"{v:g}" for v in ticks])
    if chart.hline is not None:
        ax.axhline(chart.hline, linestyle=":", color="#444")
    for i, (x, label) in enumerate(chart.marks):
        ax.axvline(x, linestyle=":", color="#999")
        # above the plot frame, where no data is drawn, one row per mark so that two
        # nearby break-evens do not print over each other
        ax.annotate(
            _text(label),
            (x, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(0, 3 + 11 * i),
            textcoords="offset points",
            fontsize=7,
            ha="center",
            va="bottom",
            annotation_clip=False,
        )
    ax.set_xlabel(_text(chart.x_title))
    ax.set_ylabel(_text(chart.y_title))
    ax.grid(True, alpha=0.3)
    _legend(ax, legend)


def _legend(ax: Any, wanted: bool = True) -> None:
    """A legend only over drawn, labelled lines: traces whose points are all missing (a
    metric an imported run lacks) draw nothing, and `ax.legend()` over nothing warns."""
    if wanted and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)


def _error_bars(ax: Any, t: Trace, index: list[int], xs: list[Any]) -> None:
    """Each point's interval as an error bar (points without one are skipped)."""
    if not (t.low or t.high):
        return
    keep = [
        (x, t.y[i], t.low[i], t.high[i]) for i, x in zip(index, xs, strict=True)
        if i < len(t.low) and i < len(t.high)
        and None not in (t.y[i], t.low[i], t.high[i])
    ]
    if not keep:
        return
    px, py, lo, hi = zip(*keep, strict=True)
    below = [max(0.0, y - low) for y, low in zip(py, lo, strict=True)]
    above = [max(0.0, high - y) for y, high in zip(py, hi, strict=True)]
    ax.errorbar(px, py, yerr=[below, above], fmt="none", capsize=3, linewidth=1,
                ecolor=PALETTE[t.color_index % len(PALETTE)])


def _draw_bars(ax: Any, chart: Chart) -> None:
    groups = [str(x) for x in chart.traces[0].x] if chart.traces else []
    width = 0.8 / max(len(chart.traces), 1)
    for i, t in enumerate(chart.traces):
        xs = [g + i * width for g in range(len(groups))]
        ax.bar(
            xs,
            [y or 0 for y in t.y],
            width,
            label=_text(t.name),
            color=PALETTE[t.color_index % len(PALETTE)],
            hatch="//" if t.dash else None,
        )
        _error_bars(ax, t, list(range(len(t.x))), xs)
    ticks = [g + 0.4 - width / 2 for g in range(len(groups))]
    ax.set_xticks(ticks, [_text(g) for g in groups], fontsize=8)
    ax.set_yscale("symlog")
    ax.set_ylabel(_text(chart.y_title))
    _legend(ax)


def _draw_heatmap(ax: Any, chart: Chart) -> None:
    from matplotlib.colors import ListedColormap

    cmap = ListedColormap(["#eeeeee", "#f4cccc", "#fff2cc", "#d9ead3"])
    ax.imshow(chart.z, cmap=cmap, vmin=-1.5, vmax=2.5, aspect="auto")
    ax.set_xticks(range(len(chart.cols)), [_text(c) for c in chart.cols], fontsize=8)
    ax.set_yticks(range(len(chart.rows)), [_text(r) for r in chart.rows], fontsize=8)
    for r, row in enumerate(chart.z_text):
        for c, text in enumerate(row):
            ax.text(c, r, _text(text), ha="center", va="center", fontsize=9)
    ax.set_ylabel(_text(chart.y_title))


def render_png(chart: Chart, path: Path) -> list[TickLabel]:
    """Draw `chart` into `path` (PNG); returns its tick labels as drawn (for checks)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return _render(plt, chart, path)


@dataclass(frozen=True)
class TickLabel:
    text: str
    parse_math: bool
    width_px: float


def _render(plt: Any, chart: Chart, path: Path) -> list[TickLabel]:
    grid = chart.kind == "grid"
    fig, axes = plt.subplots(2, 3, figsize=(15, 8)) if grid else plt.subplots(figsize=(8, 4.5))
    try:
        if grid:
            for ax, panel in zip(axes.flat, chart.panels, strict=False):
                _draw_lines(ax, panel, legend=panel is chart.panels[0])
                ax.set_title(_text(panel.y_title), fontsize=9)
                ax.set_xlabel("c")
        elif chart.kind == "bars":
            _draw_bars(axes, chart)
        elif chart.kind == "heatmap":
            _draw_heatmap(axes, chart)
        else:
            _draw_lines(axes, chart)
        fig.suptitle(_text(f"{chart.info.id} {chart.info.title}"))
        fig.tight_layout()
        with atomic_file(path) as handle:  # never through a link planted at `path`
            fig.savefig(handle, dpi=DPI, format="png")
        return _tick_labels(fig)
    finally:
        plt.close(fig)


def _tick_labels(fig: Any) -> list[TickLabel]:
    renderer = fig.canvas.get_renderer()
    return [
        TickLabel(t.get_text(), t.get_parse_math(), t.get_window_extent(renderer).width)
        for ax in fig.axes
        for t in (*ax.get_xticklabels(), *ax.get_yticklabels())
        if t.get_visible() and t.get_text()
    ]
