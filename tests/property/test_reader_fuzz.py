"""A fuzz pass over every reader of a user's file: datasets (each format and auto), traces
(each format and auto), rate-shape CSVs, imported tables, comparison files, stored runs, and
outside JSON. The only outcomes allowed are a parsed value or `UserInputError` (its
`DataFormatError` included): never another exception, a RecursionError or a hang."""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from servecap.core import json_input
from servecap.core.errors import UserInputError

SETTINGS = settings(max_examples=80, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])

# Pieces of every format read here, so the parsers get past their first checks.
PIECES = [
    b"{", b"}", b"[", b"]", b",", b":", b'"', b"\n", b"\r\n", b"\xef\xbb\xbf", b"\xff",
    b"\x00", b"null", b"NaN", b"Infinity", b"-1", b"0", b"1e999", b"18446744073709551616",
    b'"prompt"', b'"messages"', b'"conversations"', b'"role"', b'"user"', b'"content"',
    b'"from"', b'"human"', b'"value"', b'"max_tokens"', b'"timestamp"', b'"input_length"',
    b'"output_length"', b'"hash_ids"', b"TIMESTAMP,ContextTokens,GeneratedTokens\n",
    b"Timestamp,Request tokens,Response tokens\n", b"2023-11-16 18:15:46.6805900",
    b"config,concurrency,ttft_mean_ms,tps_mean\n", b'"kind": "servecap-comparison"',
    b"[" * 3000, b"]" * 3000, b'"x"', b"2.5", b"=cmd", b"\x1b[31m",
]
noise = st.one_of(st.binary(max_size=400), st.lists(st.sampled_from(PIECES), max_size=50)
                  .map(b"".join))


def _json_value(depth: int) -> st.SearchStrategy[object]:
    leaf = st.none() | st.booleans() | st.integers(-10, 10**6) | st.text(max_size=8) \
        | st.floats(allow_nan=False, allow_infinity=False)
    return st.recursive(leaf, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(st.sampled_from(
                            ["prompt", "messages", "role", "content", "conversations", "from",
                             "value", "timestamp", "input_length", "output_length",
                             "hash_ids", "max_tokens"]), inner, max_size=5),
                        max_leaves=depth)


json_lines = st.lists(_json_value(12).map(lambda v: json.dumps(v).encode()), max_size=6) \
    .map(b"\n".join)
inputs = noise | json_lines


@pytest.fixture(scope="module")
def workdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="servecap-fuzz-"))


def _parsed_or_user_error(read: Callable[[], object]) -> None:
    with contextlib.suppress(UserInputError):  # the typed error is an allowed outcome
        read()


def _file(workdir: Path, name: str, data: bytes) -> Path:
    path = workdir / name
    path.write_bytes(data)
    return path


@SETTINGS
@given(data=inputs, fmt=st.sampled_from(["auto", "prompt", "openai", "sharegpt"]))
def test_dataset_reader(workdir: Path, data: bytes, fmt: str) -> None:
    from servecap.workload.datasets import read_dataset

    path = _file(workdir, "d.jsonl", data)
    _parsed_or_user_error(lambda: read_dataset(path, fmt))


@SETTINGS
@given(data=inputs, fmt=st.sampled_from(["auto", "mooncake", "azure", "burstgpt"]))
def test_trace_reader(workdir: Path, data: bytes, fmt: str) -> None:
    from servecap.workload.traces import read_trace

    path = _file(workdir, "t.jsonl" if fmt in ("auto", "mooncake") else "t.csv", data)
    _parsed_or_user_error(lambda: read_trace(path, fmt).window(0.0, None))


@SETTINGS
@given(data=inputs)
def test_rate_shape_csv_reader(workdir: Path, data: bytes) -> None:
    from servecap.kinds.rate_shape import parse_shape

    _file(workdir, "shape.csv", data)
    _parsed_or_user_error(lambda: parse_shape("csv:shape.csv", workdir))


@SETTINGS
@given(data=inputs)
def test_imported_table_reader(workdir: Path, data: bytes) -> None:
    from servecap.storage.import_summary import read_summary_table

    path = _file(workdir, "table.csv", b"config,concurrency,ttft_mean_ms,tps_mean\n" + data)
    _parsed_or_user_error(lambda: read_summary_table(path))


@pytest.mark.slow
@SETTINGS
@given(data=inputs)
def test_comparison_reader(workdir: Path, data: bytes) -> None:
    from servecap.api.comparison.store import read_comparison

    _file(workdir, "comparison.json", data)
    _parsed_or_user_error(lambda: read_comparison(workdir))


@SETTINGS
@given(run_json=inputs | st.just(b'{"name": "a", "status": "running"}'),
       summary=inputs | st.just(b""), rows=inputs)
@pytest.mark.slow
def test_stored_run_reader(workdir: Path, run_json: bytes, summary: bytes,
                           rows: bytes) -> None:
    from servecap.storage.runs import load_run
    from servecap.storage.verification import load_verification

    run = workdir / "run"
    run.mkdir(exist_ok=True)
    for name, data in (("run.json", run_json), ("summary.json", summary),
                       ("requests.jsonl", rows), ("verification.json", summary)):
        _file(run, name, data)
    if not summary:
        (run / "summary.json").unlink()  # recomputed from the rows
    _parsed_or_user_error(lambda: load_run(run))
    load_verification(run)  # None when unreadable, never an error


@SETTINGS
@given(data=inputs)
def test_outside_json_is_a_value_or_a_value_error(data: bytes) -> None:
    try:
        value = json_input.loads(data)
    except (ValueError, UnicodeDecodeError):
        return
    assert json_input.within_depth(value)
