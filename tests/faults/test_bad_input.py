"""Bad input for every command: exit 2, one line naming the problem, no traceback, no load."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.faults.runs import CliResult, invoke, invoke_report, run_args
from tests.servers.fault_server import FaultServer, FaultServerThread


def assert_one_error(result: CliResult, needle: str) -> None:
    assert result.exception is None, repr(result.exception)
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert needle.lower() in lines[0].lower(), lines[0]
    assert "Traceback" not in result.stderr + result.stdout


def _flag(args: list[str], name: str, value: str) -> list[str]:
    if name in args:
        args = list(args)
        args[args.index(name) + 1] = value
        return args
    return [*args, name, value]


RUN_CASES: list[tuple[str, str, str]] = [
    ("--concurrency", "", "--concurrency"),
    ("--concurrency", "0", "concurrency level '0'"),
    ("--concurrency", "1,-2", "'-2'"),
    ("--concurrency", "1,x", "'x'"),
    ("--concurrency", "1.5", "'1.5'"),
    ("--concurrency", "200000", "100000"),
    ("--base-url", "ftp://127.0.0.1/v1", "--base-url"),
    ("--base-url", "not a url", "--base-url"),
    ("--base-url", "http://", "--base-url"),
    ("--base-url", "http://127.0.0.1:99999/v1", "port"),
    ("--rounds", "0", "invalid --rounds:"),
    ("--output-tokens", "0", "invalid --output-tokens:"),
    ("--input-tokens", "-5", "invalid --input-tokens:"),
    ("--warmup", "-1", "invalid --warmup:"),
    ("--timeout", "0", "invalid --timeout:"),
    ("--timeout", "nan", "invalid --timeout:"),
    ("--stall-timeout", "-1", "invalid --stall-timeout:"),
    ("--connect-timeout", "0", "invalid --connect-timeout:"),
    ("--endpoint", "embeddings", "--endpoint"),
    ("--header", "NoColonHere", "--header"),
    ("--extra-body", "{bad json", "--extra-body"),
    ("--extra-body", "[1, 2]", "--extra-body"),
    ("--model", "not-served", "not served"),
    ("--base-url", "http://u:p@127.0.0.1:abc/v1", "port"),
    ("--header", "Bad Name: v", "header name"),
    ("--header", "Na(me): v", "header name"),
    ("--extra-body", '{"stream": false}', "'stream'"),
    ("--extra-body", '{"model": "other"}', "--model"),
    ("--extra-body", '{"max_tokens": 9}', "--output-tokens"),
    ("--extra-body", '{"messages": []}', "'messages'"),
    ("--ca-bundle", "/nonexistent/ca.pem", "ca-bundle"),
]


@pytest.mark.parametrize(("flag", "value", "needle"), RUN_CASES)
def test_run_rejects_bad_input_before_load(flag: str, value: str, needle: str,
                                           tmp_path: Path) -> None:
    server = FaultServer()
    with FaultServerThread(server) as thread:
        args = run_args(thread.base_url, tmp_path / "out")
        result = invoke(_flag(args, flag, value))
    assert_one_error(result, needle)
    assert server.completions == 0
    assert not list(tmp_path.glob("out/*/run.json"))


def test_run_rejects_garbage_ca_bundle(tmp_path: Path) -> None:
    bundle = tmp_path / "ca.pem"
    bundle.write_bytes(b"\x00\xffnot a certificate")
    server = FaultServer()
    with FaultServerThread(server) as thread:
        result = invoke(run_args(thread.base_url, tmp_path / "out", "--ca-bundle", str(bundle)))
    assert_one_error(result, "ca-bundle")
    assert server.completions == 0


def test_credentials_in_bad_url_not_echoed(tmp_path: Path) -> None:
    result = invoke(run_args("ftp://user:hunter2@127.0.0.1/v1", tmp_path / "out"))
    assert_one_error(result, "--base-url")
    assert "hunter2" not in result.stderr + result.stdout


# --- files: run.json, summary.json, requests.jsonl, import-summary CSV --------------------

def _run_dir(tmp_path: Path, run_json: bytes, summary: bytes | None = None) -> Path:
    run = tmp_path / "run-a"
    run.mkdir()
    (run / "run.json").write_bytes(run_json)
    if summary is not None:
        (run / "summary.json").write_bytes(summary)
    return run


GOOD_RUN = json.dumps({"name": "a", "status": "complete"}).encode()
NESTED = b"[" * 100_000 + b"]" * 100_000

RUN_FILES: dict[str, tuple[bytes, bytes | None, str]] = {
    "run_binary": (b"\x00\x01\x02binary", None, "binary"),
    "run_not_utf8": (b"{\"name\": \"\xff\xfe\"}", None, "UTF-8"),
    "run_bad_json": (b"{\"name\": ", None, "not a valid run file"),
    "run_json_list": (b"[1, 2, 3]", None, "not a valid run file"),
    "run_wrong_types": (b'{"name": 5, "status": "maybe"}', None, "not a valid run file"),
    "run_nested": (NESTED, None, "not a valid run file"),
    "run_huge": (b" " * (17 * 1024 * 1024) + GOOD_RUN, None, "too large"),
    "summary_binary": (GOOD_RUN, b"\x00\x00", "binary"),
    "summary_bad_json": (GOOD_RUN, b"[{", "not a valid summary"),
    "summary_object": (GOOD_RUN, b'{"a": 1}', "JSON list"),
    "summary_bad_row": (GOOD_RUN, b'[{"concurrency": "many"}]', "not a valid summary"),
    "summary_nested": (GOOD_RUN, NESTED, "not a valid summary"),
    "summary_nan": (GOOD_RUN, b'[{"concurrency": 1, "ttft_mean_ms": NaN}]',
                    "not a valid summary"),
}


@pytest.mark.parametrize("case", sorted(RUN_FILES))
@pytest.mark.parametrize("command", ["show", "plan", "report"])
def test_bad_run_files(case: str, command: str, tmp_path: Path) -> None:
    run_json, summary, needle = RUN_FILES[case]
    run = _run_dir(tmp_path, run_json, summary)
    if command == "report":
        result = invoke_report([str(run), "--out", str(tmp_path / "rep")])
    else:
        result = invoke([command, str(run)])
    assert_one_error(result, needle)


def test_show_missing_path(tmp_path: Path) -> None:
    assert_one_error(invoke(["show", str(tmp_path / "nope")]), "no such run")


def test_plan_empty_dir(tmp_path: Path) -> None:
    assert_one_error(invoke(["plan", str(tmp_path)]), "no runs found")


def test_garbage_requests_jsonl_is_skipped(tmp_path: Path) -> None:
    run = _run_dir(tmp_path, json.dumps({"name": "a", "status": "running"}).encode())
    good = {"request_id": 1, "concurrency": 2, "stream_index": 0, "scheduled_at": 0,
            "sent_at": 10, "first_byte_at": 20, "first_token_at": 30, "last_token_at": 90,
            "ended_at": 100, "chunk_at": [30, 60, 90], "completion_tokens": 3}
    hostile = [b"\x00\xff\xfe", b"[" * 50_000, b'{"request_id": "x", "sent_at": "soon"}',
               b'{"concurrency": [], "status": "ok"}', b"null", b'"text"']
    lines = [json.dumps(good).encode(), *hostile, json.dumps(good).encode()[:20]]
    (run / "requests.jsonl").write_bytes(b"\n".join(lines))
    result = invoke(["show", str(run), "--format", "json"])
    assert result.exit_code == 0, result.stderr or repr(result.exception)
    levels = json.loads(result.stdout)["levels"]
    assert [(lv["concurrency"], lv["n_requests"]) for lv in levels] == [(2, 1)]


@pytest.mark.parametrize(
    ("flags", "needle"),
    [(["--ttft-slo-ms", "-1"], "invalid --ttft-slo-ms:"), (["--tps-slo", "-3"], "--tps-slo"),
     (["--stat", "p99"], "--stat"), (["--think-time-s", "-1"], "invalid --think-time-s:"),
     (["--format", "xml"], "--format")],
)
def test_plan_bad_options(flags: list[str], needle: str, tmp_path: Path) -> None:
    run = _run_dir(tmp_path, GOOD_RUN, b"[]")
    assert_one_error(invoke(["plan", str(run), *flags]), needle)


def _csv(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "table.csv"
    path.write_bytes(data)
    return path


HEADER = b"config,concurrency,ttft_mean_ms\n"
CSV_CASES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "missing": (lambda p: p / "absent.csv", "cannot read"),
    "binary": (lambda p: _csv(p, b"\x00\x01PK\x03\x04"), "binary"),
    "not_utf8": (lambda p: _csv(p, HEADER + b"a,1,\xff\n"), "UTF-8"),
    "huge": (lambda p: _csv(p, HEADER + b"a,1,2\n" * 3_000_000), "too large"),
    "empty": (lambda p: _csv(p, b""), "missing column"),
    "header_only": (lambda p: _csv(p, HEADER), "no rows"),
    "missing_column": (lambda p: _csv(p, b"config,ttft\n"), "missing column"),
    "unknown_column": (lambda p: _csv(p, b"config,concurrency,rm -rf\n"), "unknown column"),
    "bad_number": (lambda p: _csv(p, HEADER + b"a,many,3\n"), "concurrency"),
    "empty_config": (lambda p: _csv(p, HEADER + b",1,3\n"), "empty config"),
    "huge_field": (lambda p: _csv(p, HEADER + b"a,1,\"" + b"9" * 200_000 + b"\"\n"),
                   "table.csv"),
    "unclosed_quote": (lambda p: _csv(p, HEADER + b"a,1,\"3\n\"x"), "table.csv"),
    "extra_cells": (lambda p: _csv(p, HEADER + b"a,1,3,4,5\n"), "beyond the header"),
    "nan": (lambda p: _csv(p, HEADER + b"a,1,nan\n"), "finite"),
    "inf": (lambda p: _csv(p, HEADER + b"a,1,-inf\n"), "finite"),
}


@pytest.mark.parametrize("case", sorted(CSV_CASES))
def test_import_summary_bad_csv(case: str, tmp_path: Path) -> None:
    make, needle = CSV_CASES[case]
    path = make(tmp_path)
    result = invoke(["import-summary", str(path), "--out", str(tmp_path / "out")])
    assert_one_error(result, needle)
    assert not list(tmp_path.glob("out/*/run.json"))


def test_a_row_of_no_level_is_skipped(tmp_path: Path) -> None:
    run = _run_dir(tmp_path, json.dumps({"name": "a", "status": "complete"}).encode())
    row = {"request_id": 1, "concurrency": 0, "stream_index": 0, "scheduled_at": 0,
           "sent_at": 10, "ended_at": 100}
    (run / "requests.jsonl").write_text(json.dumps(row) + "\n")
    for command in ("show", "plan"):
        result = invoke([command, str(run)])
        assert result.exception is None, repr(result.exception)
        assert result.exit_code == 0, result.stderr


def test_rows_are_kept_by_the_level_they_name(tmp_path: Path) -> None:
    from servecap.storage.run_dir import iter_records

    base = {"request_id": 1, "stream_index": 0, "scheduled_at": 0, "sent_at": 10,
            "ended_at": 100}
    rows = [
        {**base, "concurrency": 0, "level": "fixed=1"},  # another kind's row: kept
        {**base, "concurrency": 0, "level": "bogus=1"},  # no such level: skipped
        {**base, "concurrency": 2, "level": 7},  # not a level's text: skipped
        {**base, "concurrency": 0, "level": "c=0"},  # no closed level below 1: skipped
        {**base, "concurrency": 2},
    ]
    path = tmp_path / "requests.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert [str(r.key) for r in iter_records(path)] == ["fixed=1", "c=2"]


def test_report_out_that_is_a_file(tmp_path: Path) -> None:
    run = _run_dir(tmp_path, GOOD_RUN, json.dumps([{"concurrency": 1, "n_requests": 1}]).encode())
    target = tmp_path / "a-file"
    target.write_text("x")
    assert_one_error(invoke_report([str(run), "--out", str(target)]), "not a directory")


def test_an_imported_table_with_nan_never_reaches_report(tmp_path: Path) -> None:
    path = _csv(tmp_path, HEADER + b"a,1,nan\nb,1,4\n")
    imported = invoke(["import-summary", str(path), "--out", str(tmp_path / "out")])
    assert_one_error(imported, "finite")
