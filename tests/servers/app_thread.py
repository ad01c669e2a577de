"""Run an aiohttp app on 127.0.0.1:0 (optionally TLS) in a thread with its own event loop."""

from __future__ import annotations

import asyncio
import ssl
import threading
from typing import Any

from aiohttp import web


class AppThread:
    """A real server for tests: `with AppThread(app) as server: server.base_url`."""

    def __init__(
        self, app: web.Application, ssl_context: ssl.SSLContext | None = None, **runner: Any
    ) -> None:
        self._app = app
        self._ssl = ssl_context
        self._runner_options = {"access_log": None, **runner}
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self.port = 0
        self._thread = threading.Thread(target=self._main, daemon=True)

    @property
    def base_url(self) -> str:
        scheme = "https" if self._ssl else "http"
        return f"{scheme}://127.0.0.1:{self.port}/v1"

    def _main(self) -> None:
        import uvloop

        self._loop = uvloop.new_event_loop()
        self._loop.run_until_complete(self._start())
        self._ready.set()
        self._loop.run_forever()

    async def _start(self) -> None:
        self._runner = web.AppRunner(self._app, **self._runner_options)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=self._ssl, backlog=4096)
        await site.start()
        assert site._server is not None
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def __enter__(self) -> AppThread:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("test server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._loop is not None and self._runner is not None
        fut = asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop)
        try:
            fut.result(10)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
