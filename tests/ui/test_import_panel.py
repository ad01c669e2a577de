"""The History page imports another tool's results: a path typed, or files uploaded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from servecap.storage.run_dir import find_run_dirs, load_run_info
from tests.storage.formats.peer_files import AIPERF, GUIDELLM

pytestmark = pytest.mark.timeout(120)


def _text(markdown: str) -> str:
    """The app escapes server and file text for Markdown; read it back plain."""
    return markdown.replace("\\", "")


def _history(app_factory: Any, results: Path) -> Any:
    at = app_factory(results)
    return at.sidebar.radio(key="page").set_value("History & compare").run()


def test_a_typed_path_becomes_a_run_in_the_history(app_factory: Any, tmp_path: Path) -> None:
    results = tmp_path / "results"
    at = _history(app_factory, results)
    assert any("No saved runs" in i.value for i in at.info)
    at = at.text_area(key="import_paths").set_value(f"{GUIDELLM}\n").run()
    at = at.button(key="import_go").click().run()
    assert not at.exception
    assert any("Imported: guidellm-" in _text(s.value) for s in at.success)
    [run_dir] = find_run_dirs(results)
    assert load_run_info(run_dir).imported["tool"] == "GuideLLM"
    history = at.dataframe[0].value
    assert len(history) == 1  # listed on the same page, at once


def test_a_bad_file_is_named_and_nothing_written(app_factory: Any, tmp_path: Path) -> None:
    results = tmp_path / "results"
    bad = tmp_path / "notes.json"
    bad.write_text('{"hello": 1}')
    at = _history(app_factory, results)
    at = at.text_area(key="import_paths").set_value(str(bad)).run()
    at = at.button(key="import_go").click().run()
    assert any("notes.json: not a format servecap can import" in _text(e.value)
               for e in at.error)
    assert not results.exists() or not find_run_dirs(results)


class _Upload:
    """What st.file_uploader hands back: a name and the bytes."""

    def __init__(self, path: Path) -> None:
        self.name = path.name
        self._data = path.read_bytes()

    def getvalue(self) -> bytes:
        return self._data


def test_uploaded_aiperf_files_keep_their_records(tmp_path: Path) -> None:
    from servecap.ui.import_panel import _from_uploads

    export = AIPERF[0]
    _from_uploads([_Upload(export), _Upload(export.parent / "profile_export.jsonl")], tmp_path)
    [run_dir] = find_run_dirs(tmp_path)
    assert load_run_info(run_dir).imported["per_request"] is True
    assert len((run_dir / "requests.jsonl").read_text().splitlines()) == 40
