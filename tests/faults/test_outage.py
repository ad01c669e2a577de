"""A server that goes away for good mid-sweep: the run stops after `--outage-s` without a
success, says so, keeps what it measured and exits non-zero (not "complete" with a sweep of
`connect_refused` rows)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from aiohttp import web

from tests.faults.runs import invoke, only_run_dir, rows, run_args, run_info
from tests.servers import fault_server
from tests.servers.fault_server import FaultServer, FaultServerThread


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_server_gone_for_good_stops_the_run(
    workers: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone = threading.Event()

    async def last_answer(request: web.Request) -> web.StreamResponse:
        gone.set()  # the server shuts down for good after this one
        return await fault_server.ok(request)

    monkeypatch.setitem(fault_server.FAULTS, "last_answer", last_answer)
    server = FaultServer(queue=["ok", "ok", "last_answer"], default="ok")
    thread = FaultServerThread(server).__enter__()
    closer = threading.Thread(target=lambda: (gone.wait(60), thread.__exit__()))
    closer.start()
    try:
        args = run_args(thread.base_url, tmp_path / "out", "--concurrency", "1,2",
                        "--outage-s", "0.3", "--workers", workers)
        args[args.index("--rounds") + 1] = "200000"  # hours of load if nothing stopped it
        result = invoke(args)
    finally:
        gone.set()
        closer.join(30)
    assert result.exception is None, repr(result.exception)
    assert result.exit_code == 1, result.stderr
    last = [line for line in result.stderr.splitlines() if line.strip()][-1]
    assert last.startswith("error: run stopped: server gone"), result.stderr
    run_dir = only_run_dir(tmp_path / "out")
    info = run_info(run_dir)
    assert info["status"] == "incomplete" and "server gone" in info["stop_reason"]
    stored = rows(run_dir)
    assert sum(r["status"] == "ok" for r in stored) >= 3  # what was measured is kept
    assert stored[-1]["status"] != "ok" and "(incomplete)" in result.stdout
