"""Run the simulator under uvicorn: blocking (``serve``) or in a background thread."""

from __future__ import annotations

import asyncio
import importlib.util
import subprocess
import sys
import threading
import time
from collections.abc import Coroutine
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


READY_LINE = "servecap-sim listening on "


async def _serve_and_announce(server: Any, host: str) -> None:
    async def announce() -> None:
        while not server.started:
            await asyncio.sleep(0.01)
        print(f"{READY_LINE}http://{host}:{_bound_port(server)}/v1", file=sys.stderr, flush=True)

    task = asyncio.get_running_loop().create_task(announce())
    try:
        await server.serve()
    finally:
        task.cancel()


def _server(profile: Profile, host: str, port: int, time_scale: float, seed: int) -> Any:
    """A configured (not yet started) uvicorn server for the profile."""
    import uvicorn

    return uvicorn.Server(_uvicorn_config(create_app(profile, time_scale, seed), host, port))


def _run_loop(server: Any, main: Coroutine[Any, Any, None]) -> None:
    """Run `main` to the end on uvloop where the server was configured for it."""
    if server.config.loop == "uvloop":
        import uvloop

        uvloop.run(main)
    else:
        asyncio.run(main)


def serve(
    profile: Profile,
    host: str = "127.0.0.1",
    port: int = 8000,
    time_scale: float = 1.0,
    seed: int = 0,
) -> None:
    """Serve ``profile`` until interrupted (blocking); prints the URL to stderr when ready."""
    server = _server(profile, host, port, time_scale, seed)
    _run_loop(server, _serve_and_announce(server, host))


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
    server = _server(profile, host, port, time_scale, seed)

    def run() -> None:
        _run_loop(server, server.serve())

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


class SimProcessHandle:
    """A simulator running as a child process (no GIL shared with the caller)."""

    def __init__(self, proc: subprocess.Popen[str], base_url: str) -> None:
        self.proc = proc
        self.base_url = base_url
        self.port = int(base_url.rsplit(":", 1)[1].split("/", 1)[0])

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the child and wait for it."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout)
        if self.proc.stderr is not None:
            self.proc.stderr.close()

    def __enter__(self) -> SimProcessHandle:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def start_server_process(
    profile: str,
    host: str = "127.0.0.1",
    port: int = 0,
    time_scale: float = 1.0,
    startup_timeout: float = 30.0,
) -> SimProcessHandle:
    """Start ``python -m servecap.sim serve`` for a profile name or file; returns when it
    listens. Prefer this over a thread when the caller also measures (no shared GIL)."""
    cmd = [
        sys.executable,
        "-m",
        "servecap.sim",
        "serve",
        "--profile",
        profile,
        "--host",
        host,
        "--port",
        str(port),
        "--time-scale",
        repr(time_scale),
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    deadline = time.monotonic() + startup_timeout
    lines: list[str] = []
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line.strip())
        if line.startswith(READY_LINE):
            return SimProcessHandle(proc, line[len(READY_LINE) :].strip())
    proc.kill()
    proc.wait()
    raise RuntimeError(f"simulator process did not start: {' | '.join(lines[-3:])}")
