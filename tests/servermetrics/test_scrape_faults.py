"""A bad /metrics (slow, huge, malformed, HTML, gone) is a counted scrape error, never a
failed run; real servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from servecap.api.run.run import run_benchmark_async
from servecap.api.run.run_config import RunConfig
from servecap.client.metrics_scrape import scrape_once
from servecap.core.config import ClientOptions
from servecap.storage.server_metrics_file import SERVER_METRICS_FILE, read_scrapes
from tests.servermetrics.expositions import VLLM_V1
from tests.servers.app_thread import AppThread
from tests.servers.fault_server import FaultServer, FaultServerThread, free_port


async def _slow(request: web.Request) -> web.Response:
    await asyncio.sleep(5)  # pace: a /metrics slower than the scrape's timeout
    return web.Response(text=VLLM_V1)


def answer(body: str, ctype: str = "text/plain") -> object:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(body=body.encode(), headers={"Content-Type": ctype})

    return handler


def metrics_app() -> web.Application:
    app = web.Application()
    app.router.add_get("/ok", answer(VLLM_V1))
    app.router.add_get("/slow", _slow)
    app.router.add_get("/huge", answer("x 1\n" * 500_000))
    app.router.add_get("/malformed", answer("vllm:num_requests_running{ 3 x\n"))
    app.router.add_get("/html", answer("<html>hi</html>", "text/html"))
    app.router.add_get("/html-as-text", answer("<!doctype html><p>login"))
    app.router.add_get("/empty", answer(""))
    return app


@pytest.fixture(scope="module")
def server() -> AppThread:
    with AppThread(metrics_app(), shutdown_timeout=0.5) as thread:
        yield thread


async def _scrape(url: str, **kw: float) -> tuple[str | None, int]:
    async with aiohttp.ClientSession() as session:
        result = await scrape_once(session, url, **kw)  # type: ignore[arg-type]
    return result.error, len(result.samples)


def root(server: AppThread) -> str:
    return server.base_url.removesuffix("/v1")


@pytest.mark.parametrize(
    ("path", "error"),
    [("/ok", None), ("/malformed", "malformed"), ("/html", "not_metrics"),
     ("/html-as-text", "not_metrics"), ("/empty", "malformed"), ("/nothing", "http_404")],
)
def test_each_bad_answer_is_one_named_error(server: AppThread, path: str, error: str) -> None:
    got, n = asyncio.run(_scrape(root(server) + path))
    assert got == error
    assert (n > 0) == (error is None)


def test_a_slow_metrics_is_cut_at_the_time_cap(server: AppThread) -> None:
    got, _ = asyncio.run(_scrape(root(server) + "/slow", timeout_s=0.3))
    assert got == "timeout"


def test_a_huge_metrics_is_cut_at_the_size_cap(server: AppThread) -> None:
    got, _ = asyncio.run(_scrape(root(server) + "/huge", max_bytes=100_000))
    assert got == "too_large"


def test_a_server_that_is_gone_is_unreachable() -> None:
    got, _ = asyncio.run(_scrape(f"http://127.0.0.1:{free_port()}/metrics"))
    assert got == "unreachable"


class Vanishing:
    """/metrics that works for `good` scrapes, then answers 500 (the exporter died)."""

    def __init__(self, good: int) -> None:
        self.left = good

    async def handle(self, request: web.Request) -> web.Response:
        self.left -= 1
        if self.left < 0:
            raise web.HTTPInternalServerError()
        return web.Response(text=VLLM_V1)


def _run(base_url: str, out: Path, **kw: object) -> tuple[dict, list]:
    config = RunConfig(
        concurrency=[1, 2], rounds=2, output_tokens=4, warmup=0, out_dir=str(out),
        client=ClientOptions(base_url=base_url), **kw,
    )
    outcome = asyncio.run(run_benchmark_async(config))
    info = json.loads((outcome.run_dir / "run.json").read_text())
    assert outcome.info.status == "complete"
    return info, outcome.levels


def test_metrics_that_disappear_mid_run_are_counted_not_fatal(tmp_path: Path) -> None:
    fault = FaultServer()
    app = fault.app()
    app.router.add_get("/metrics", Vanishing(good=2).handle)
    with AppThread(app, handler_cancellation=True, shutdown_timeout=0.5) as server:
        info, levels = _run(server.base_url, tmp_path, server_metrics="auto")
    status = info["server_metrics"]
    assert status["state"] == "on" and status["errors"].get("http_500", 0) >= 1
    assert [lv.n_ok for lv in levels] == [2, 4]
    scrapes = list(read_scrapes(next(tmp_path.iterdir()) / SERVER_METRICS_FILE))
    assert [s.error for s in scrapes[:2]] == [None, None]
    assert all(s.error == "http_500" for s in scrapes[2:])
    assert sum(lv.server_scrape_errors or 0 for lv in levels) >= 1


def test_auto_without_metrics_turns_itself_off_and_says_so(tmp_path: Path) -> None:
    with FaultServerThread(FaultServer()) as server:
        info, levels = _run(server.base_url, tmp_path)
    status = info["server_metrics"]
    assert status["state"] == "off" and "http_404" in status["reason"]
    assert not (next(tmp_path.iterdir()) / SERVER_METRICS_FILE).exists()
    assert all(lv.server_scrapes is None for lv in levels)


@pytest.mark.slow
def test_off_scrapes_nothing(tmp_path: Path) -> None:
    with FaultServerThread(FaultServer()) as server:
        info, _ = _run(server.base_url, tmp_path, server_metrics="off")
    assert info["server_metrics"] == {"mode": "off", "state": "off"}
