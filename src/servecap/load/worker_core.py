"""One worker's side of a level, whatever carries its messages (a socket, a Ray actor).

A worker holds its own backend (client, connection pool) and request source, both made
by the factory `api` passes in, so `load` never imports the client. For each share it is
given it waits for the shared start time, then runs the share through the same scheduler
code a single process runs, inside its own client monitor, and emits a message per request
started (`s`) and ended (`r`, the row), then `done` with its health. A row is emitted the
moment its request ends, so a worker that dies later loses none it finished.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from servecap.core.clock import now_ns, sleep_until
from servecap.core.records import RequestRecord
from servecap.kinds.io import Backend, LevelIO
from servecap.load.monitor import ClientMonitor
from servecap.load.worker_wire import level_from_wire, record_to_wire, skeleton
from servecap.workload.source import AnyRequest, RequestSource

Emit = Callable[[dict[str, Any]], None]
# The factory `api` gives the workers (picklable: it travels to the worker process): called
# in the worker with its index and the pool's size, an async context manager yielding the
# backend that sends and the source of what to send. Worker k of N sends the run's requests
# k, k + N, ... (`workload.source.for_worker`), so together they send each request once.
BackendFactory = Callable[[int, int], AbstractAsyncContextManager[tuple[Backend, RequestSource]]]


class _Tapped:
    """The worker's backend: says a request started before sending it."""

    def __init__(self, inner: Backend, emit: Emit) -> None:
        self._inner, self._emit = inner, emit

    async def send(
        self, request: AnyRequest, record: RequestRecord, at_ns: int | None = None
    ) -> None:
        self._emit({"op": "s", "rec": skeleton(record)})
        await self._inner.send(request, record, at_ns)


class WorkerCore:
    """Runs the shares a parent sends, one at a time, on the running event loop."""

    def __init__(self, backend: Backend, source: RequestSource, emit: Emit) -> None:
        self._backend = _Tapped(backend, emit)
        self._source = source
        self._emit = emit
        self._ids = itertools.count()  # worker-local; the parent gives each row its run id
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    def start(self, message: dict[str, Any]) -> None:
        """Begin the share in `message` (`level`, `part`, `t0`: this worker's clock)."""
        self._stop = asyncio.Event()
        self._task = asyncio.get_running_loop().create_task(self._run(message, self._stop))

    def stop(self) -> None:
        if self._stop is not None:
            self._stop.set()

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def wait(self) -> None:
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self, message: dict[str, Any], stop: asyncio.Event) -> None:
        level = level_from_wire(message["level"])
        start = int(message["t0"])
        level = level.starting_at(start)  # a planned share's targets count from it
        part = message.get("part")
        sent = 0

        def sink(record: RequestRecord) -> None:
            nonlocal sent
            sent += 1
            self._emit({"op": "r", "rec": record_to_wire(record)})

        io = LevelIO(self._backend, self._source, sink, self._ids, stop,
                     tuple(part) if part else None)
        monitor = ClientMonitor()
        error = None
        try:
            await sleep_until(start)
            async with monitor:
                await level.run(io)
        except asyncio.CancelledError:
            error = "cancelled"
        except Exception as exc:  # the parent records it; the worker lives on
            error = f"{type(exc).__name__}: {exc}"
        finally:
            self._emit({"op": "done", "health": monitor.fields(), "requests": sent,
                        "error": error, "pid": os.getpid()})


def pong(message: dict[str, Any]) -> dict[str, Any]:
    """The answer to a clock ping: the parent's stamp back, and this process's clock."""
    return {"op": "pong", "t": message.get("t"), "w": now_ns()}
