"""Every chart PNG, rendered: tick labels are drawn as numbers, not as TeX source."""

from __future__ import annotations

from pathlib import Path

import pytest

from servecap.api.stored.report import ReportModel
from servecap.report.charts_png import render_png
from servecap.report.charts_spec import CHARTS, all_charts


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_run_missing_metrics_draws_every_png_without_a_warning(tmp_path: Path) -> None:
    """Charts whose traces have no points for this run (imported summaries lack ITL, chunk
    gaps, ...) draw no legend rather than matplotlib's "No artists with labels" warning."""
    import json
    import warnings

    from servecap.api.stored.report import ReportOptions, build_report
    from servecap.core.summary import LevelSummary
    from servecap.storage.run_dir import write_summaries
    from servecap.storage.runs import load_runs

    run = tmp_path / "r"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"name": "r"}))
    write_summaries(run, [LevelSummary(concurrency=c, ttft_p90_ms=100 * c, tps_p90=30,
                                       latency_mean_s=0.3) for c in (1, 2)])
    model = build_report(load_runs([run]), ReportOptions(title="sparse"))
    empty = 0
    for chart in all_charts(model):
        empty += chart.kind == "lines" and not any(
            y is not None for t in chart.traces for y in t.y)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # any warning, the legend's included, fails
            render_png(chart, tmp_path / f"{chart.info.id}.png")
    assert empty, "the sparse run must leave some chart without points, or this tests nothing"
