"""The HTML and Markdown reports label an imported run with its tool and list what was not
mapped; an imported run's rps is its tool's completed / duration, shown as measured."""

from __future__ import annotations

import html

import pytest

from tests.storage.formats.peer_files import BR_EXAMPLE, GUIDELLM, import_one, servecap


@pytest.mark.slow
def test_report_labels_imported_runs(tmp_path):
    runs = tmp_path / "runs"
    import_one(runs, GUIDELLM)
    import_one(runs, BR_EXAMPLE)
    code, output = servecap("report", str(runs), "--out", str(tmp_path / "report"))
    assert code == 0, output
    page = html.unescape((tmp_path / "report" / "report.html").read_text())
    assert "imported from GuideLLM 0.8.1 (benchmarks.json)" in page
    assert "imported from inference-perf 0.3.0 (br_v0_2_1_example.yaml)" in page
    assert "not mapped: chunk gaps: GuideLLM keeps no per-chunk arrival times" in page
    assert "not mapped: tps (per user, N / latency)" in page
    markdown = (tmp_path / "report" / "report.md").read_text().replace("\\", "")
    assert "imported from GuideLLM 0.8.1" in markdown
    # a peer's file is not the seed's published table: its rps is the system's (completed /
    # duration), so the seed table's caveat and c / latency stand-in do not apply
    assert "Imported runs (" not in markdown
