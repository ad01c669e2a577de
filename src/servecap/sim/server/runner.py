"""Run the simulator: blocking (``serve``), in a background thread, or as a child process."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib.util
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any

from servecap.sim.profiles import Profile
from servecap.sim.server.app import SimApp
from servecap.sim.server.http11 import start_http_server
from servecap.sim.server.power import PowerModel

READY_LINE = "servecap-sim listening on "


async def _serve_app(
    app: SimApp, host: str, port: int, stop: asyncio.Event, ready: Callable[[int], None]
) -> None:
    """Serve ``app`` on host:port until ``stop`` is set; ``ready(bound port)`` once listening."""
    app.start()
    try:
        server = await start_http_server(app, host, port, app.state.batch)
        try:
            ready(int(server.sockets[0].getsockname()[1]))
            await stop.wait()
        finally:
            server.close()
    finally:
        await app.stop()


def _run(main: Coroutine[Any, Any, None]) -> None:
    """Run ``main`` on uvloop when it is installed (a faster event loop), else asyncio."""
    if importlib.util.find_spec("uvloop"):
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
    """Serve ``profile`` until SIGINT or SIGTERM (blocking); prints the URL to stderr when
    ready. Raises OSError when the address cannot be bound."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):  # not on Windows
                loop.add_signal_handler(sig, stop.set)

        def ready(bound: int) -> None:
            # what start-up built (imports, profile, app) moves out of the collector's way,
            # which otherwise rescans it in every full collection: with 1024 streams open a
            # request's set-up took about 45 us of CPU, and 25 us with this
            gc.freeze()
            print(f"{READY_LINE}http://{host}:{bound}/v1", file=sys.stderr, flush=True)

        await _serve_app(SimApp(profile, time_scale, seed), host, port, stop, ready)

    _run(main())


class SimServerHandle:
    """A simulator running in a background thread with its own event loop."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.port = 0
        self.error: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, ending in /v1."""
        return f"http://{self.host}:{self.port}/v1"

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving and wait for the thread."""
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout)

    def start(self, app: SimApp, port: int, name: str, timeout: float) -> None:
        """Serve ``app`` in a daemon thread; returns once it listens (RuntimeError if not)."""

        async def main() -> None:
            self._loop = asyncio.get_running_loop()
            self._stop = asyncio.Event()
            await _serve_app(app, self.host, port, self._stop, self._listening)

        def run() -> None:
            try:
                _run(main())
            except BaseException as exc:  # reported to the starting thread below
                self.error = exc
                self._ready.set()

        self._thread = threading.Thread(target=run, name=name, daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout) or self.error is not None:
            self.stop()
            raise RuntimeError(f"simulator failed to start on {self.host}:{port}: {self.error}")

    def _listening(self, bound: int) -> None:
        self.port = bound
        self._ready.set()

    def __enter__(self) -> SimServerHandle:
        return self

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def start_server_in_thread(
    profile: Profile,
    host: str = "127.0.0.1",
    port: int = 0,
    time_scale: float = 1.0,
    seed: int = 0,
    startup_timeout: float = 15.0,
    power: PowerModel | None = None,
) -> SimServerHandle:
    """Start the simulator in a daemon thread; returns once it accepts connections
    (`power`: the watts behind its `/dcgm` series)."""
    handle = SimServerHandle(host)
    app = SimApp(profile, time_scale, seed, power)
    handle.start(app, port, f"servecap-sim-{profile.name}", startup_timeout)
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
