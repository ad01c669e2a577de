"""The Results page's exports through AppTest: the run's BR v0.2.1 partials and its tables,
each a ZIP whose files are the run's (the partials are the ones the run wrote in br/)."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(120)


@pytest.mark.slow
def test_results_page_downloads_br_partials_and_tables(app_factory: Any, two_runs: Path) -> None:
    at = app_factory(two_runs)
    at = at.sidebar.radio(key="page").set_value("Results").run()
    assert "Export" in [h.value for h in at.subheader]
    at = at.button(key="results-exports-build").click().run(timeout=120)
    assert not at.exception
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download Benchmark Report v0.2.1 partials (ZIP)" in labels
    assert "Download requests and levels tables, CSV (ZIP)" in labels
    assert "Download requests and levels tables, Parquet (ZIP)" in labels
    # what the buttons serve: the ZIPs the page built and holds for this run
    path, built = at.session_state["results-exports"]
    run_dir = Path(path)
    assert run_dir.parent == two_runs
    br = zipfile.ZipFile(io.BytesIO(built["servecap-br-v0.2.1.zip"]))
    on_disk = sorted(p.name for p in (run_dir / "br").iterdir())
    assert sorted(n.removeprefix("br/") for n in br.namelist()) == on_disk == [
        "01-c-1.json", "02-c-2.json"]
    for name in on_disk:
        assert json.loads(br.read(f"br/{name}")) == json.loads((run_dir / "br" / name).read_text())
    tables = zipfile.ZipFile(io.BytesIO(built["servecap-tables-csv.zip"]))
    levels = list(csv.DictReader(io.StringIO(tables.read("tables/levels.csv").decode())))
    assert [row["level"] for row in levels] == ["c=1", "c=2"]
