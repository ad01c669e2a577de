"""Round two of the fault probe: bad input of every kind exits 2 with one message before any
load, and leaves no run directory behind; a hostile server's deep JSON is a clear error."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from tests.faults.runs import invoke, run_args
from tests.faults.test_bad_input import assert_one_error
from tests.servers.fault_server import FaultServer, FaultServerThread

DEEP = "[" * 100_000 + "]" * 100_000


def _without(args: list[str], flag: str) -> list[str]:
    """`args` less `flag` and its value (a dataset brings its own prompt lengths)."""
    at = args.index(flag)
    return args[:at] + args[at + 2:]


def _nested_dataset(tmp_path: Path) -> str:
    path = tmp_path / "nested.jsonl"
    path.write_text('{"prompt": "hi", "x": ' + DEEP + "}\n")
    return str(path)


CASES: list[tuple[list[str], str]] = [
    (["--dataset", "@nested"], "nested too deeply"),
    (["--dataset", "@nested", "--dataset-format", "bogus"], "--dataset-format"),
    (["--prefix-tokens", "-3"], "--prefix-tokens"),
    (["--prefix-tokens", "3", "--prefix-groups", "0"], "--prefix-groups"),
    (["--extra-body", '{"temperature": NaN}'], "NaN is not JSON"),
    (["--extra-body", DEEP], "--extra-body"),
    (["--name", "run-\udcff"], "--name is not valid UTF-8"),
    (["--header", "X-Team: a\udcffb"], "--header is not valid UTF-8"),
    (["--base-url", "http://127.0.0.1:1/v\udcff"], "--base-url is not valid UTF-8"),
]


@pytest.mark.parametrize(("extra", "needle"), CASES, ids=[c[1][:24] for c in CASES])
def test_bad_input_exits_2_and_leaves_nothing(
    extra: list[str], needle: str, tmp_path: Path
) -> None:
    extra = [_nested_dataset(tmp_path) if e == "@nested" else e for e in extra]
    server = FaultServer()
    with FaultServerThread(server) as thread:
        args = run_args(thread.base_url, tmp_path / "out")
        if "--dataset" in extra:
            args = _without(args, "--input-tokens")
        if "--base-url" in extra:
            args[args.index("--base-url") + 1] = extra[extra.index("--base-url") + 1]
            extra = []
        result = invoke([*args, *extra])
    assert_one_error(result, needle)
    assert server.completions == 0
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("body", [
    b'{"data": ' + DEEP.encode() + b"}",
    b'{"object": "list", "data": [{"id": ' + b"[" * 5000 + b"]" * 5000 + b"}]}",
])
def test_a_deeply_nested_model_list_is_one_clear_error(body: bytes, tmp_path: Path) -> None:
    server = FaultServer(models_body=body)
    with FaultServerThread(server) as thread:
        result = invoke(run_args(thread.base_url, tmp_path / "out"))
    assert_one_error(result, "cannot reach server")
    assert server.completions == 0


def test_a_model_id_of_null_is_no_model(tmp_path: Path) -> None:
    body = json.dumps({"object": "list", "data": [{"id": None}]}).encode()
    server = FaultServer(models_body=body)
    with FaultServerThread(server) as thread:
        result = invoke(run_args(thread.base_url, tmp_path / "out"))
    assert result.exit_code == 2, result.stderr
    assert "None" not in result.stderr and server.completions == 0


def test_ui_refuses_a_bad_host_and_a_port_in_use() -> None:
    pytest.importorskip("streamlit")
    bad = invoke(["ui", "--host", "no such host..invalid", "--port", "0"])
    assert_one_error(bad, "--host")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = invoke(["ui", "--host", "127.0.0.1", "--port", str(port)])
    assert_one_error(busy, "cannot listen")


def test_a_device_or_fifo_dataset_ends_at_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`/dev/zero` says 0 bytes and never ends; a FIFO with no writer never opens: both
    read with a byte limit (lowered here so the test reads 1 MiB, not 256)."""
    import os

    from servecap.core import bounded_read

    monkeypatch.setattr(bounded_read, "STREAM_LIMIT", 1024 * 1024)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    server = FaultServer()
    with FaultServerThread(server) as thread:
        args = _without(run_args(thread.base_url, tmp_path / "out"), "--input-tokens")
        zero = invoke([*args, "--dataset", "/dev/zero"])
        empty = invoke([*args, "--dataset", str(fifo)])
    assert_one_error(zero, "too large")
    assert_one_error(empty, "no usable rows")
    assert server.completions == 0 and not (tmp_path / "out").exists()


@pytest.mark.parametrize(("header", "needle"), [
    ("Content-Length: 5", "Content-Length is set by servecap"),
    ("transfer-encoding: chunked", "transfer-encoding is set by servecap"),
    ("Host: elsewhere", "Host is set by servecap"),
])
def test_framing_headers_are_refused(header: str, needle: str, tmp_path: Path) -> None:
    server = FaultServer()
    with FaultServerThread(server) as thread:
        result = invoke(run_args(thread.base_url, tmp_path / "out", "--header", header))
    assert_one_error(result, needle)
    assert server.completions == 0


@pytest.mark.parametrize(("times", "extra", "needle"), [
    ((0, 10, 1e15), [], "--trace-duration"),
    ((0, 10, 3.6e6), ["--trace-speed", "0.0001"], "--trace-speed"),
])
def test_a_replay_without_end_is_refused(
    times: tuple[float, ...], extra: list[str], needle: str, tmp_path: Path
) -> None:
    trace = tmp_path / "trace.jsonl"
    rows = [{"timestamp": t, "input_length": 8, "output_length": 4, "hash_ids": [1]}
            for t in times]
    trace.write_text("".join(json.dumps(r) + "\n" for r in rows))
    server = FaultServer()
    with FaultServerThread(server) as thread:
        args = run_args(thread.base_url, tmp_path / "out", "--trace", str(trace), *extra)
        del args[args.index("--concurrency"):args.index("--concurrency") + 4]  # and --rounds
        result = invoke(_without(args, "--input-tokens"))
    assert_one_error(result, needle)
    assert server.completions == 0


def test_sim_predict_bounds_its_draws() -> None:
    result = invoke(["sim", "predict", "deterministic", "--draws", "1000000000"])
    assert_one_error(result, "--draws")


def _no_concurrency(args: list[str]) -> list[str]:
    at = args.index("--concurrency")
    return args[:at] + args[at + 4:]  # --concurrency 1 --rounds 3


IGNORED: list[tuple[list[str], str, bool]] = [
    (["--rate", "1", "--requests", "2"], "nothing would be measured", True),
    (["--requests", "5"], "--requests needs --rate", False),
    (["--think-time", "exp:5"], "--think-time needs --users", False),
    (["--rate", "2", "--burstiness", "0.5"], "--burstiness needs --arrival gamma", True),
    (["--dataset", "@dataset", "--input-tokens", "512"], "drop --input-tokens", False),
    (["--out", ""], "--out", False),
]


@pytest.mark.parametrize(("extra", "needle", "open_loop"), IGNORED,
                         ids=[c[1][:28] for c in IGNORED])
def test_a_flag_that_would_be_ignored_is_refused(
    extra: list[str], needle: str, open_loop: bool, tmp_path: Path
) -> None:
    dataset = tmp_path / "d.jsonl"
    dataset.write_text('{"prompt": "hello"}\n')
    extra = [str(dataset) if e == "@dataset" else e for e in extra]
    server = FaultServer()
    with FaultServerThread(server) as thread:
        args = run_args(thread.base_url, tmp_path / "out")
        args = _no_concurrency(args) if open_loop else args
        if "--out" in extra:
            args[args.index("--out") + 1] = ""
            extra = []
        result = invoke([*args, *extra])
    assert_one_error(result, needle)
    assert server.completions == 0
    assert not list(Path.cwd().glob("fault-model-*"))


@pytest.mark.parametrize("flags", [["--ttft-slo-ms", "nan"], ["--tps-slo", "nan"],
                                   ["--think-time-s", "inf"]])
def test_a_slo_that_is_no_number_is_refused(flags: list[str], tmp_path: Path) -> None:
    result = invoke(["plan", str(tmp_path), *flags])
    assert_one_error(result, flags[0])
