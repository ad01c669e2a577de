"""Property tests: every file loader raises only servecap's own errors on arbitrary bytes."""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servecap.core.errors import ServecapError
from servecap.storage.import_summary import read_summary_table
from servecap.storage.run_dir import iter_records, load_run_info, load_summaries
from servecap.storage.runs import load_run

SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])

GOOD_RUN = b'{"name": "a", "status": "running"}'
CSV_HEADER = b"config,concurrency,ttft_mean_ms,tps_mean,error_rate\n"

# Bytes that look a little like the real formats, so the parsers get past their first check.
fragments = st.sampled_from([
    b"{", b"}", b"[", b"]", b",", b":", b'"', b"\n", b"\r\n", b"null", b"1e999", b"-1",
    b'"name"', b'"status"', b'"levels"', b'"concurrency"', b"\xff", b"\x00", b"config",
    b"=cmd", b'""', b"a,1,2,3,4\n", b"NaN", b"true",
])
noisy_bytes = st.one_of(st.binary(max_size=300),
                        st.lists(fragments, max_size=60).map(b"".join))


def _only_servecap_errors(load: Callable[[], object]) -> None:
    with contextlib.suppress(ServecapError):
        load()


def _write(directory: Path, name: str, data: bytes) -> Path:
    path = directory / name
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def workdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="servecap-prop-"))


@SETTINGS
@given(data=noisy_bytes, with_header=st.booleans())
def test_import_csv_reader(workdir: Path, data: bytes, with_header: bool) -> None:
    path = _write(workdir, "t.csv", (CSV_HEADER if with_header else b"") + data)
    _only_servecap_errors(lambda: read_summary_table(path))


@SETTINGS
@given(data=noisy_bytes)
def test_run_json_loader(workdir: Path, data: bytes) -> None:
    _write(workdir, "run.json", data)
    _only_servecap_errors(lambda: load_run_info(workdir))


@SETTINGS
@given(data=noisy_bytes)
def test_summary_json_loader(workdir: Path, data: bytes) -> None:
    (workdir / "run.json").write_bytes(GOOD_RUN)
    _write(workdir, "summary.json", data)
    _only_servecap_errors(lambda: load_summaries(workdir))


json_rows = st.dictionaries(
    st.sampled_from(["request_id", "concurrency", "stream_index", "scheduled_at", "sent_at",
                     "first_token_at", "ended_at", "chunk_at", "status", "completion_tokens",
                     "warmup", "last_token_at", "chunk_tokens"]),
    st.none() | st.booleans() | st.integers(-5, 10**12) | st.text(max_size=5)
    | st.lists(st.integers(-5, 100), max_size=4),
)


@SETTINGS
@given(lines=st.lists(noisy_bytes | json_rows.map(lambda d: json.dumps(d).encode()),
                      max_size=8))
@pytest.mark.slow
def test_requests_jsonl_then_summary(workdir: Path, lines: list[bytes]) -> None:
    """Garbage rows are skipped; a partial run still loads and summarises."""
    run = workdir / "run"
    run.mkdir(exist_ok=True)
    (run / "summary.json").unlink(missing_ok=True)
    (run / "run.json").write_bytes(GOOD_RUN)
    (run / "requests.jsonl").write_bytes(b"\n".join(lines))
    list(iter_records(run / "requests.jsonl"))
    _only_servecap_errors(lambda: load_run(run))
