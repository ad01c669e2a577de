"""Write a report to disk: tables, chart PNGs, report.html, report.md, results.zip."""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from servecap.report.charts_spec import all_charts
from servecap.report.model import ReportModel
from servecap.report.server_section import timeline_figures
from servecap.storage.safe_files import (
    DIR_MODE,
    atomic_file,
    make_dir,
    safe_name,
    write_atomic,
)


@dataclass
class ReportPaths:
    """Where each part of a written report lies."""

    out_dir: Path
    html: Path
    markdown: Path
    zip: Path
    model_json: Path
    charts: list[Path] = field(default_factory=list)
    tables: list[Path] = field(default_factory=list)


def write_charts(model: ReportModel, charts_dir: Path) -> tuple[dict[str, dict], list[Path]]:
    """Every chart as a PNG; returns the plotly figures (drawn in report.html) and the files.

    The interactive charts live in report.html only (each at `report.html#chart-NN`): a
    standalone page per chart would need plotly (4.6 MB) a second time beside the report.
    """
    from servecap.report.charts_plotly import figure
    from servecap.report.charts_png import render_png

    make_dir(charts_dir)
    figures: dict[str, dict] = {}
    files: list[Path] = []
    for chart in all_charts(model):
        base = charts_dir / f"{chart.info.id}-{chart.info.slug}"
        figures[chart.info.id] = figure(chart)
        render_png(chart, base.with_suffix(".png"))
        files.append(base.with_suffix(".png"))
    figures.update(timeline_figures(model))  # drawn in report.html (#chart-timeline-N)
    return figures, files


def write_report(model: ReportModel, out_dir: Path) -> ReportPaths:
    """Write the whole report into `out_dir` (created if needed)."""
    from servecap.report.html import render_html
    from servecap.report.markdown import render_markdown
    from servecap.report.tables import write_tables

    out_dir.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)  # the user's: a link is theirs
    tables = write_tables(model, out_dir / "tables")
    figures, charts = write_charts(model, out_dir / "charts")
    html = write_atomic(out_dir / "report.html", render_html(model, figures))
    md = write_atomic(out_dir / "report.md", render_markdown(model))
    model_json = write_atomic(out_dir / "report.json", model.model_dump_json(indent=1))
    paths = ReportPaths(
        out_dir=out_dir,
        html=html,
        markdown=md,
        zip=out_dir / "results.zip",
        model_json=model_json,
        charts=charts,
        tables=tables,
    )
    write_zip(model, paths)
    return paths


def write_zip(model: ReportModel, paths: ReportPaths) -> None:
    """Everything written plus each run's run.json and summary.json (not requests.jsonl)."""
    files = [paths.html, paths.markdown, paths.model_json, *paths.tables, *paths.charts]
    with (atomic_file(paths.zip) as handle,
          zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as bundle):
        for path in files:
            if path.is_file():
                bundle.write(path, path.relative_to(paths.out_dir).as_posix())
        for i, run in enumerate(model.runs, start=1):
            folder = f"runs/{i:02d}-{safe_name(run.name)}"
            source = Path(run.path)
            for name in ("run.json", "summary.json"):
                if (source / name).is_file():
                    bundle.write(source / name, f"{folder}/{name}")
            if not (source / "summary.json").is_file():
                rows = [lv.stored() for lv in run.levels]
                bundle.writestr(f"{folder}/summary.json", json.dumps(rows, indent=2))
