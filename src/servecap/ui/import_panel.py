"""Import another tool's results from the History page: upload files or type paths."""

from __future__ import annotations

import tempfile
from pathlib import Path

import streamlit as st

from servecap.api.stored.imports import import_files
from servecap.core.errors import UserInputError
from servecap.storage.safe_files import safe_name, write_atomic
from servecap.ui.text import plain

FORMATS_HELP = (
    "AIPerf profile_export_aiperf.json (with profile_export.jsonl beside it, or uploaded "
    "with it), GuideLLM benchmarks.json, SGLang bench_serving JSONL, vllm bench serve JSON, "
    "llm-d Benchmark Report v0.2.1 (a file, or a folder of partials by path), the seed's "
    "Appendix A CSV. Files of one format given together become one run."
)


def _import(paths: list[Path], results: Path) -> None:
    try:
        written = import_files(paths, results)
    except UserInputError as exc:  # the file and the field, as the CLI says it
        st.error(plain(str(exc)))
        return
    st.success(plain("Imported: " + ", ".join(p.name for p in written)))


def _from_uploads(uploads: list, results: Path) -> None:
    """Uploaded files land together in one scratch folder (AIPerf's JSONL beside its
    JSON), under names made safe; the run is written into `results`."""
    with tempfile.TemporaryDirectory(prefix="servecap-import-") as scratch:
        paths = []
        for upload in uploads:
            path = Path(scratch) / safe_name(upload.name)
            write_atomic(path, upload.getvalue())
            paths.append(path)
        # the JSONL rides along with its JSON: only the files a format is named by
        named = [p for p in paths if not p.name.endswith("profile_export.jsonl")
                 or not any(q.name.endswith("_aiperf.json") for q in paths)]
        _import(named, results)


def render_import_panel(results: Path) -> None:
    with st.expander("Import another tool's results"):
        st.caption(FORMATS_HELP)
        uploads = st.file_uploader("Upload files", accept_multiple_files=True,
                                   key="import_upload")
        typed = st.text_area("...or paths on this machine, one a line", key="import_paths")
        if not st.button("Import", key="import_go"):
            return
        paths = [Path(line.strip()) for line in typed.splitlines() if line.strip()]
        if uploads:
            _from_uploads(list(uploads), results)
        if paths:
            _import(paths, results)
        if not uploads and not paths:
            st.warning("Upload a file or type a path first.")
