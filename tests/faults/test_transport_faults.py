"""Faults below HTTP: connection refused and TLS with a self-signed certificate.

Preflight reaches the server before any load, so through the CLI these end with exit 2 and
one line naming the reason; the client itself is tested too, for a server that goes away
(or presents a bad certificate) once the run has started.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from servecap.client.http import StreamingClient, make_session
from servecap.core.config import ClientOptions
from servecap.core.records import RequestRecord
from servecap.kinds.closed import ClosedLoad
from servecap.kinds.io import LevelIO
from servecap.metrics.level import summarise_level
from servecap.workload.source import builtin_source
from tests.faults.runs import invoke, only_run_dir, rows, run_args, run_info
from tests.faults.tls import server_context
from tests.servers.fault_server import MODEL, FaultServer, FaultServerThread, free_port


async def _client_rows(options: ClientOptions, n: int = 3) -> list[RequestRecord]:
    out: list[RequestRecord] = []
    async with make_session(options, 1, {}) as session:
        client = StreamingClient(session, options, MODEL, "chat", 4)
        level = ClosedLoad(concurrency=[1], rounds=n).levels()[0]
        await level.run(LevelIO(client, builtin_source(8, 4), out.append, itertools.count()))
    return out


def _one_error_line(stderr: str, needle: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: ") and needle in lines[0], stderr
    assert "Traceback" not in stderr


def test_connect_refused_at_preflight_exits_2(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    result = invoke(run_args(url, tmp_path / "out"))
    assert result.exit_code == 2
    _one_error_line(result.stderr, "connect_refused")
    assert not list((tmp_path / "out").glob("*/run.json"))


async def test_connect_refused_rows_are_kept_and_counted() -> None:
    options = ClientOptions(base_url=f"http://127.0.0.1:{free_port()}/v1", timeout_s=2,
                            connect_timeout_s=1)
    records = await _client_rows(options)
    assert [r.reason for r in records] == ["connect_refused"] * 3
    assert all(r.http_status is None and r.first_byte_at is None for r in records)
    level = summarise_level(1, records)
    assert level.n_failed == 3 and level.error_rate == 1.0 and level.ttft_mean_ms is None
    assert level.failures == {"connect_refused": 3}


def test_tls_self_signed_refused_by_default(tmp_path: Path) -> None:
    context, _ = server_context(tmp_path)
    server = FaultServer()
    with FaultServerThread(server, context) as thread:
        result = invoke(run_args(thread.base_url, tmp_path / "out"))
    assert result.exit_code == 2
    _one_error_line(result.stderr, "tls_verify_failed")
    assert server.completions == 0


@pytest.mark.parametrize("flag", ["insecure", "ca_bundle"])
def test_tls_self_signed_accepted_when_asked(flag: str, tmp_path: Path) -> None:
    context, cert = server_context(tmp_path)
    extra = ["--insecure"] if flag == "insecure" else ["--ca-bundle", str(cert)]
    with FaultServerThread(FaultServer(), context) as thread:
        result = invoke(run_args(thread.base_url, tmp_path / "out", *extra))
    assert result.exit_code == 0, result.stderr
    run_dir = only_run_dir(tmp_path / "out")
    assert [r["status"] for r in rows(run_dir)] == ["ok"] * 3
    assert run_info(run_dir)["config"]["client"]["insecure"] is (flag == "insecure")


async def test_tls_verify_failed_row(tmp_path: Path) -> None:
    context, _ = server_context(tmp_path)
    with FaultServerThread(FaultServer(), context) as thread:
        records = await _client_rows(ClientOptions(base_url=thread.base_url, timeout_s=2))
    assert [r.reason for r in records] == ["tls_verify_failed"] * 3
    assert all(r.status == "failed" for r in records)


async def test_https_to_a_plain_http_port_is_a_handshake_error() -> None:
    with FaultServerThread(FaultServer()) as thread:
        url = thread.base_url.replace("http://", "https://")
        records = await _client_rows(ClientOptions(base_url=url, timeout_s=3,
                                                   connect_timeout_s=1))
    assert [r.reason for r in records] == ["tls_handshake_failed"] * 3
