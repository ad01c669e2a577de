"""Server and user text stays inert in HTML, Markdown and CSV."""

from __future__ import annotations

import csv
from html.parser import HTMLParser
from pathlib import Path

import pytest

from servecap.api.stored.report import ReportOptions, build_report, write_report
from servecap.core.errors import UserInputError
from servecap.core.run_info import RunInfo
from servecap.core.summary import LevelSummary
from servecap.storage.run_dir import new_run_dir, write_run_info, write_summaries
from servecap.storage.runs import load_runs

SCRIPT = "</script><script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
LINK = "[click](javascript:alert(1)) <a href='javascript:alert(1)'>x</a>"


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def _levels() -> list[LevelSummary]:
    return [
        LevelSummary(concurrency=c, ttft_mean_ms=50.0 * c, ttft_p90_ms=60.0 * c, itl_mean_ms=5.0,
                     tps_mean=100.0 / c, tps_p90=90.0 / c, latency_mean_s=1.0 + c / 10,
                     latency_p90_s=1.2 + c / 10, rps=c / (1.0 + c / 10), output_tok_s=90.0 * c,
                     n_requests=10 * c, n_ok=10 * c, completion_tokens_mean=128)
        for c in (1, 2, 4)
    ]


def _run(out: Path, name: str, model: str, note: str) -> Path:
    run_dir = new_run_dir(out, "hostile")
    info = RunInfo(name=name, server={"model": model}, notes=[note],
                   deployment={"engine": IMG, "launch_command": f"serve {SCRIPT}",
                               "flags": ["--note", LINK]})
    write_run_info(run_dir, info)
    write_summaries(run_dir, _levels())
    return run_dir


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs_dir = tmp_path_factory.mktemp("hostile-runs")
    _run(runs_dir, f"{SCRIPT}-spec", IMG, LINK)
    _run(runs_dir, f"{SCRIPT}-direct", "=HYPERLINK(\"http://x\")", IMG)
    _run(runs_dir, "=cmd|' /C calc'!A0", "javascript:alert(1)", SCRIPT)
    model = build_report(load_runs([runs_dir]), ReportOptions(title=f"T {SCRIPT} {IMG}"))
    out = tmp_path_factory.mktemp("hostile-report")
    write_report(model, out)
    return out


@pytest.mark.slow
def test_html_stays_inert(hostile_report: Path) -> None:
    html = (hostile_report / "report.html").read_text()
    assert SCRIPT not in html and IMG not in html and "<a href='javascript" not in html
    parser = Tags()
    parser.feed(html)
    tags = [t for t, _ in parser.tags]
    assert tags.count("script") == 3 and "img" not in tags
    for tag, attrs in parser.tags:
        for key, value in attrs:
            assert not key.startswith("on"), (tag, key)
            assert not (value or "").strip().lower().startswith("javascript:"), (tag, key)
    data = html.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data and ">" not in data and "\\u003c/script\\u003e" in data


def test_no_chart_pages_beside_the_report(hostile_report: Path) -> None:
    # the interactive charts are drawn inside report.html (checked above); charts/ holds PNGs
    assert not list((hostile_report / "charts").glob("*.html"))


def test_markdown_stays_inert(hostile_report: Path) -> None:
    md = (hostile_report / "report.md").read_text()
    assert "<script" not in md and "<img" not in md and "<a " not in md
    assert "](javascript:" not in md
    assert "&lt;/script&gt;" in md


def test_csv_cells_are_neutralised(hostile_report: Path) -> None:
    rows = list(csv.reader((hostile_report / "tables" / "combined.csv").open()))
    names = {r[0] for r in rows[1:]}
    assert "'=cmd|' /C calc'!A0" in names
    assert not any(n.startswith(("=", "+", "-", "@")) for n in names)


def test_no_runs_and_bad_pair(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="no runs"):
        build_report([], ReportOptions())
    runs_dir = tmp_path / "runs"
    _run(runs_dir, "a-spec", "m", "")
    with pytest.raises(UserInputError, match="invalid pair"):
        build_report(load_runs([runs_dir]), ReportOptions(pairs=["a-spec:missing"]))
