"""The written report: files, tables, sections, offline HTML, zip contents."""

from __future__ import annotations

import csv
import json
import re
import zipfile

from servecap.api.stored.report import ReportModel, ReportPaths
from servecap.report.charts_spec import CHARTS

from .conftest import ORDER


def test_all_parts_written(seed_report: ReportPaths) -> None:
    out = seed_report.out_dir
    for chart in CHARTS:
        base = out / "charts" / f"{chart.id}-{chart.slug}"
        assert base.with_suffix(".png").stat().st_size > 5_000
        assert f'id="chart-{chart.id}"' in seed_report.html.read_text()
    # plotly is stored once: inline in the self-contained report.html, nowhere else
    assert sorted(p.suffix for p in (out / "charts").iterdir()) == [".png"] * len(CHARTS)
    assert seed_report.html.read_text().count("Plotly.newPlot") >= 1
    assert seed_report.html.is_file() and seed_report.markdown.is_file()
    names = sorted(p.name for p in (out / "tables").iterdir())
    assert {"combined.csv", "slo_matrix.csv", "capacity.csv", "speedup.csv"} <= set(names)
    assert len([n for n in names if n.startswith("appendix-")]) == 4


def test_appendix_csv_keeps_seed_layout(seed_report: ReportPaths) -> None:
    path = next((seed_report.out_dir / "tables").glob("appendix-01-*.csv"))
    rows = list(csv.reader(path.open()))
    assert rows[0][:10] == ["concurrency", "ttft_mean_ms", "ttft_p90_ms", "itl_mean_ms",
                            "itl_p90_ms", "tps_mean", "tps_p90", "latency_mean_s",
                            "latency_p90_s", "rps"]
    assert rows[1][:10] == ["1", "66.5", "70.5", "9.46", "9.47", "100.84", "101.3", "1.27",
                            "1.27", "0.79"]
    combined = list(csv.DictReader((seed_report.out_dir / "tables/combined.csv").open()))
    assert len(combined) == 28 and combined[0]["config"] == "vllm-direct"
    assert combined[6]["aggregate_output_tok_s"] == "1759.4"


def test_capacity_csv(seed_report: ReportPaths) -> None:
    rows = list(csv.DictReader((seed_report.out_dir / "tables/capacity.csv").open()))
    p90 = {r["config"]: (r["c_max"], r["users"]) for r in rows if r["statistic"] == "p90"}
    assert p90 == {"vllm-direct": ("32", "427"), "vllm-spec": ("32", "266"),
                   "sglang-direct": ("16", "261"), "sglang-spec": ("2", "59")}


def test_html_is_offline_and_has_every_section(seed_report: ReportPaths) -> None:
    html = seed_report.html.read_text()
    markup = re.sub(r"<script[^>]*>.*?</script>", "", html, flags=re.S)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", markup)
    assert "<link" not in markup and "@import" not in markup
    assert not re.search(r"<script[^>]*\bsrc=", html)
    for anchor in ("summary", "setup", "deployments", "results", "ttft", "itl", "tps",
                   "latency", "throughput", "aggregate", "speedup", "slo", "consistency",
                   "reading", "appendix"):
        assert f'id="{anchor}"' in html
    for chart in CHARTS:
        assert f'id="chart-{chart.id}"' in html
    assert html.count("<script") == 3  # data, plotly (inlined once), page script


def test_markdown_has_charts_and_findings(seed_report: ReportPaths) -> None:
    md = seed_report.markdown.read_text()
    for chart in CHARTS:
        assert f"(charts/{chart.id}-{chart.slug}.png)" in md
    assert "427" in md and "1863" in md and "4.26 ms" in md


def test_zip_holds_everything_and_run_files(seed_report: ReportPaths) -> None:
    with zipfile.ZipFile(seed_report.zip) as bundle:
        names = set(bundle.namelist())
        wanted = {"report.html", "report.md", "tables/combined.csv", "charts/10-dashboard.png"}
        assert wanted <= names
        run_files = sorted(n for n in names if n.startswith("runs/"))
        assert len(run_files) == 8
        info = json.loads(bundle.read(next(n for n in run_files if n.endswith("run.json"))))
        assert info["source"] == "imported"


def test_model_round_trips_as_json(seed_model: ReportModel) -> None:
    again = ReportModel.model_validate_json(seed_model.model_dump_json())
    assert again.configs == ORDER
    assert again.analysis.slo.capacity_of("mean", "sglang-direct").users == 717  # type: ignore[union-attr]


def test_methodology_and_notes(seed_model: ReportModel) -> None:
    items = dict(seed_model.methodology)
    assert items["Concurrency levels"] == "1, 2, 4, 8, 16, 32, 64"
    assert items["Source"] == "imported"
    assert "closed loop" in items["Load model"]
    kinds = [f.kind for f in seed_model.summary]
    assert kinds[0] == "imported_definitions" and "break_even" in kinds
