"""Every chart PNG, rendered: tick labels are drawn as numbers, not as TeX source."""

from __future__ import annotations

from pathlib import Path

from servecap.api.report import ReportModel
from servecap.report.charts_png import render_png
from servecap.report.charts_spec import CHARTS, all_charts


def test_every_png_draws_readable_tick_labels(seed_model: ReportModel, tmp_path: Path) -> None:
    drawn = {}
    for chart in all_charts(seed_model):
        path = tmp_path / f"{chart.info.id}.png"
        drawn[chart.info.id] = render_png(chart, path)
        assert path.stat().st_size > 5_000
    assert sorted(drawn) == [c.id for c in CHARTS]
    for chart_id, labels in drawn.items():
        assert labels, chart_id
        for label in labels:
            # a label in math text ($\\mathdefault{10^{2}}$, the log axes' and symlog's) is
            # drawn as math, so it is as narrow as "10^2"; written out literally it was
            # about 150 px wide
            if "$" in label.text:
                assert label.parse_math, (chart_id, label)
            assert label.width_px < 90, (chart_id, label)
    capacity = [t.text for t in drawn["06"]]
    assert any("10^{" in t for t in capacity), capacity  # the log axis is there, as math


def test_a_dollar_in_a_run_name_stays_text(seed_model: ReportModel, tmp_path: Path) -> None:
    renamed = seed_model.model_copy(deep=True)
    for run in renamed.runs:
        run.name = f"${run.name}$"
    for chart in all_charts(renamed):
        if chart.kind == "heatmap":
            labels = render_png(chart, tmp_path / "09.png")
            rows = [t for t in labels if t.text.startswith("\\$")]
            assert rows and all(t.width_px > 40 for t in rows)
