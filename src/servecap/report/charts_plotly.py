"""Interactive charts: each `Chart` as a plotly figure (a JSON-able dict)."""

from __future__ import annotations

import math
from typing import Any

from servecap.report.chart_data import Chart, Trace

PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
STYLE: dict[str, Any] = {
    "paper_bgcolor": "#ffffff",
    "plot_bgcolor": "#ffffff",
    "font": {"size": 12},
}
HEAT_SCALE = [[0.0, "#f4cccc"], [0.5, "#fff2cc"], [1.0, "#d9ead3"]]


def _color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _traces(chart: Chart, axis: str = "") -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for t in chart.traces:
        trace: dict[str, Any] = {"name": t.name, "x": t.x, "y": t.y}
        if t.kind == "bar":
            trace.update(
                type="bar",
                marker={"color": _color(t.color_index)},
                text=[f"{v:g}" if v is not None else "" for v in t.y],
            )
        else:
            trace.update(
                type="scatter",
                mode="lines+markers",
                line={"color": _color(t.color_index), "dash": "dash" if t.dash else "solid"},
            )
        if t.low or t.high:
            trace["error_y"] = _error_bars(t)
        if axis:
            trace.update(
                xaxis=f"x{axis}", yaxis=f"y{axis}", showlegend=axis == "1", legendgroup=t.name
            )
        out.append(trace)
    return out


def _error_bars(t: Trace) -> dict[str, Any]:
    """Asymmetric error bars from each point's interval ends (0 where a point has none)."""
    def gap(ends: list[float | None], sign: int) -> list[float]:
        return [
            max(0.0, sign * (e - y)) if e is not None and y is not None else 0.0
            for e, y in zip(ends, t.y, strict=False)
        ]

    return {"type": "data", "symmetric": False, "array": gap(t.high, 1),
            "arrayminus": gap(t.low, -1), "color": _color(t.color_index), "thickness": 1.2}


def _axes(chart: Chart) -> dict[str, Any]:
    x: dict[str, Any] = {"title": {"text": chart.x_title}}
    if chart.log_x:
        x.update(type="log", tickvals=sorted({v for t in chart.traces for v in t.x}))
    x["automargin"] = True
    return {"xaxis": x, "yaxis": {"title": {"text": chart.y_title}, "automargin": True}}


def figure(chart: Chart) -> dict[str, Any]:
    """A plotly figure dict: `{"data": [...], "layout": {...}}`."""
    if chart.kind == "grid":
        return _grid(chart)
    layout: dict[str, Any] = {
        "title": {"text": f"{chart.info.id} {chart.info.title}"},
        "margin": {"t": 60, "l": 60, "r": 20, "b": 50},
        "height": 440,
        **STYLE,
    }
    if chart.kind == "heatmap":
        data = [
            {
                "type": "heatmap",
                "z": chart.z,
                "x": chart.cols,
                "y": chart.rows,
                "text": chart.z_text,
                "texttemplate": "%{text}",
                "zmin": 0,
                "zmax": 2,
                "colorscale": HEAT_SCALE,
                "showscale": False,
            }
        ]
        # automargin: the left margin grows to the longest config name and the axis title
        # stands clear of it (a fixed 60 px clipped "sglang-direct" to "ang-direct")
        layout["yaxis"] = {
            "autorange": "reversed", "automargin": True,
            "title": {"text": chart.y_title, "standoff": 12},
        }
        return {"data": data, "layout": layout}
    layout.update(_axes(chart))
    if chart.kind == "bars":
        layout["barmode"] = "group"
    shapes = []
    if chart.hline is not None:
        shapes.append(
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": chart.hline,
                "y1": chart.hline,
                "line": {"dash": "dot", "color": "#444"},
            }
        )
    for x, _label in chart.marks:
        shapes.append(
            {
                "type": "line",
                "yref": "paper",
                "y0": 0,
                "y1": 1,
                "x0": x,
                "x1": x,
                "line": {"dash": "dot", "color": "#999"},
            }
        )
    layout["shapes"] = shapes
    # above the plot area, where no data is drawn, one row per mark (nearby break-evens)
    layout["annotations"] = [
        {
            "x": _log10(x) if chart.log_x else x,
            "y": 1,
            "yref": "paper",
            "text": label,
            "showarrow": False,
            "xanchor": "center",
            "yanchor": "bottom",
            "yshift": 2 + 14 * i,
            "font": {"size": 10},
        }
        for i, (x, label) in enumerate(chart.marks)
    ]
    if chart.marks:
        layout["margin"] = {**layout["margin"], "t": 60 + 14 * len(chart.marks)}
    return {"data": _traces(chart), "layout": layout}


def _log10(x: float) -> float:
    return math.log10(x)


def _grid(chart: Chart) -> dict[str, Any]:
    data: list[dict[str, Any]] = []
    layout: dict[str, Any] = {
        "title": {"text": f"{chart.info.id} {chart.info.title}"},
        "height": 720,
        **STYLE,
        "margin": {"t": 70, "l": 50, "r": 20, "b": 40},
    }
    for i, panel in enumerate(chart.panels, start=1):
        data.extend(_traces(panel, str(i)))
        suffix = "" if i == 1 else str(i)
        axes = _axes(panel)
        axes["xaxis"]["title"]["text"] = "c"
        axes["xaxis"]["domain"] = [((i - 1) % 3) / 3 + 0.04, ((i - 1) % 3 + 1) / 3 - 0.02]
        axes["yaxis"]["domain"] = [0.55, 1.0] if i <= 3 else [0.0, 0.42]
        axes["xaxis"]["anchor"] = f"y{suffix}"
        axes["yaxis"]["anchor"] = f"x{suffix}"
        axes["yaxis"]["title"]["text"] = panel.y_title
        layout[f"xaxis{suffix}"] = axes["xaxis"]
        layout[f"yaxis{suffix}"] = axes["yaxis"]
    return {"data": data, "layout": layout}
