"""Run the simulator under uvicorn: blocking (``serve``) or in a background thread."""

from __future__ import annotations

import asyncio
import importlib.util
import threading
import time
from types import TracebackType
from typing import Any

from servecap.sim.profiles import Profile
from servecap.sim.server import create_app


def _uvicorn_config(app: Any, host: str, port: int) -> Any:
    import uvicorn

    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    http = "httptools" if importlib.util.find_spec("httptools") else "h11"
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        loop=loop,
        http=http,
        access_log=False,
        log_level="warning",
        lifespan="on",
        timeout_keep_alive=30,
    )


def serve(
    profile: Profile,
    host: str = "127.0.0.1",
    port: int = 8000,
    time_scale: float = 1.0,
    seed: int = 0,
) -> None:
    """Serve ``profile`` until interrupted (blocking)."""
    import uvicorn

    server = uvicorn.Server(_uvicorn_config(create_app(profile, time_scale, seed), host, port))
    server.run()


class SimServerHandle:
    """A simulator running in a background thread with its own event loop."""

    def __init__(self, server: Any, thread: threading.Thread, host: str) -> None:
        self._server = server
        self._thread = thread
        self.host = host
        self.port = 0

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, ending in /v1."""
        return f"http://{self.host}:{self.port}/v1"

    def stop(self, timeout: float = 10.0) -> None:
        """Ask uvicorn to exit and wait for the thread."""
        self._server.should_exit = True
        self._thread.join(timeout)

    def __enter__(self) -> SimServerHandle:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _bound_port(server: Any) -> int:
    for srv in getattr(server, "servers", []):
        for sock in srv.sockets:
            return int(sock.getsockname()[1])
    return 0


def start_server_in_thread(
    profile: Profile,
    host: str = "127.0.0.1",
    port: int = 0,
    time_scale: float = 1.0,
    seed: int = 0,
    startup_timeout: float = 15.0,
) -> SimServerHandle:
    """Start the simulator in a daemon thread; returns once it accepts connections."""
    import uvicorn

    config = _uvicorn_config(create_app(profile, time_scale, seed), host, port)
    server = uvicorn.Server(config)

    def run() -> None:
        if config.loop == "uvloop":
            import uvloop

            uvloop.run(server.serve())
        else:
            asyncio.run(server.serve())

    thread = threading.Thread(target=run, name=f"servecap-sim-{profile.name}", daemon=True)
    thread.start()
    handle = SimServerHandle(server, thread, host)
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"simulator failed to start on {host}:{port}")
        time.sleep(0.01)
    handle.port = _bound_port(server)
    return handle
