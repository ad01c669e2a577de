"""`Chart` and `Trace`: a chart as plain data (traces of numbers), drawn by both plotly and
matplotlib.

`charts_spec`, `charts_rate` and `charts_compare` build them; `charts_plotly` and
`charts_png` draw them. This module imports none of those.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from servecap.report.model import ChartInfo


class Trace(BaseModel):
    name: str
    x: list[float | int | str]
    y: list[float | None]
    dash: bool = False
    color_index: int = 0
    kind: Literal["line", "bar"] = "line"
    # error bars: each point's interval ends (absolute values), empty for none
    low: list[float | None] = Field(default_factory=list)
    high: list[float | None] = Field(default_factory=list)


class Chart(BaseModel):
    info: ChartInfo
    kind: Literal["lines", "bars", "heatmap", "grid"] = "lines"
    x_title: str = ""  # the levels' axis (`Analysis.level_kind.axis_title`) unless set
    y_title: str = ""
    log_x: bool = True
    traces: list[Trace] = Field(default_factory=list)
    hline: float | None = None
    marks: list[tuple[float, str]] = Field(default_factory=list)  # x, label (break-even)
    z: list[list[float]] = Field(default_factory=list)  # heatmap rows
    z_text: list[list[str]] = Field(default_factory=list)
    rows: list[str] = Field(default_factory=list)
    cols: list[str] = Field(default_factory=list)
    panels: list[Chart] = Field(default_factory=list)
