"""Worker pools: a level's streams, rate or users split over processes, one writer.

`WorkerSweep.run_level` has `load.sweep.run_level`'s signature, so `api.run.run` runs each
level through one or the other. It splits the level (`load.shares`), sends each worker
its share and the start time they all share, enters the level's observers in the parent
(the server-metrics scraper), and merges every row into the level's sink
(`load.level_merge`) until every share is done or its worker is gone. Stop (the run's
stop event) tells the workers to send no more; cancelling (Ctrl-C) tells them to cancel
what is in flight and waits for those rows, so an interrupt loses none.

`ProcessPool` runs the workers as local processes (spawned, each with its own event loop),
on one socket each; `load.ray_cluster` runs them as Ray actors. Both check the clocks: a
ping with the least round trip gives each worker's clock against the parent's.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, Protocol

from servecap.core.clock import now_ns
from servecap.core.errors import RunAborted
from servecap.kinds.base import LevelSpec
from servecap.kinds.io import LevelIO
from servecap.load.level_merge import LevelMerge
from servecap.load.shares import auto_workers, split_level
from servecap.load.sweep import LevelObserver
from servecap.load.worker_core import BackendFactory
from servecap.load.worker_proc import LINE_LIMIT, send_factory
from servecap.load.worker_wire import decode, encode, level_to_wire

START_LEAD_NS = 100_000_000  # shares go out this long before the shared start
DRAIN_S = 30.0  # after a cancel, how long the parent waits for the rows in flight
PINGS = 20
HELLO_S = 120.0  # a spawned worker imports servecap and the client; a loaded host is slow


@dataclass
class ClockCheck:
    """One worker's clock against the parent's, from the ping with the least round trip."""

    offset_ns: int
    rtt_ns: int

    @property
    def one_clock(self) -> bool:
        """Within what the ping can resolve, the two processes read the same clock."""
        return abs(self.offset_ns) <= self.rtt_ns


class Handle(Protocol):
    index: int
    alive: bool
    clock: ClockCheck

    def send(self, message: dict[str, Any]) -> None: ...


class WorkerSweep:
    """Runs levels over `handles`; subclasses start and stop them and feed `deliver`."""

    def __init__(self, count: int | None, cores: int) -> None:
        self.count = count  # None: auto, per level
        self.cores = cores
        self.handles: list[Handle] = []
        self.current: LevelMerge | None = None
        self.deaths: list[dict[str, Any]] = []
        self._level_key: Any = None

    def deliver(self, worker: int, message: dict[str, Any]) -> None:
        if self.current is not None:
            self.current.on_message(worker, message)

    def died(self, worker: int, why: str) -> None:
        self.deaths.append({"worker": worker, "why": why,
                            "level": str(self._level_key) if self.current else None})
        if self.current is not None:
            self.current.on_death(worker, why)

    def workers_for(self, level: LevelSpec, live: int) -> int:
        wanted = self.count if self.count is not None else auto_workers(level, self.cores)
        return max(1, min(wanted, live))

    async def run_level(
        self, level: LevelSpec, io: LevelIO, observers: Sequence[LevelObserver] = (),
        observed: dict[str, Any] | None = None,
    ) -> None:
        """Run `level` on the live workers and merge its rows into `io.sink`."""
        live = [h for h in self.handles if h.alive]
        if not live:
            raise RunAborted("every worker process has died; the rows recorded are kept")
        shares = split_level(level, self.workers_for(level, len(live)), io.source)
        merge = LevelMerge(io, {
            live[s.worker].index: (s.stream_offset, self._offset(live[s.worker]))
            for s in shares
        })
        self.current, self._level_key = merge, level.key
        t0 = now_ns() + START_LEAD_NS
        for share in shares:
            handle = live[share.worker]
            handle.send({"op": "level", "level": level_to_wire(share.level),
                         "part": share.part, "t0": t0 + self._offset(handle)})
        try:
            async with AsyncExitStack() as stack:
                for observer in observers:
                    await stack.enter_async_context(observer)
                await self._wait(merge, io)
        except asyncio.CancelledError:
            await asyncio.shield(self._drain(merge))
            raise
        finally:
            self.current = None
            if observed is not None:
                for observer in observers:
                    observed.update(observer.fields())
                observed.update(merge.fields())
        if merge.failure is not None:
            raise merge.failure

    @staticmethod
    def _offset(handle: Handle) -> int:
        """The clock difference applied to a worker's start time and rows: none where the
        ping shows one clock (every process of a host), the measured offset elsewhere."""
        return 0 if handle.clock.one_clock else handle.clock.offset_ns

    async def _wait(self, merge: LevelMerge, io: LevelIO) -> None:
        stopping = asyncio.ensure_future(io.stop.wait()) if io.stop is not None else None
        try:
            finished = asyncio.ensure_future(merge.finished.wait())
            pending = {finished, *([stopping] if stopping else [])}
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            if stopping in done:
                self._tell_all({"op": "stop"})
                await finished
        finally:
            if stopping is not None:
                stopping.cancel()
        if merge.failure is not None:
            self._tell_all({"op": "cancel"})

    async def _drain(self, merge: LevelMerge) -> None:
        self._tell_all({"op": "cancel"})
        try:
            await asyncio.wait_for(merge.finished.wait(), DRAIN_S)
        except TimeoutError:
            for worker, part in merge.parts.items():
                if not part.done:
                    merge.on_death(worker, "did not answer the cancel")

    def _tell_all(self, message: dict[str, Any]) -> None:
        for handle in self.handles:
            if handle.alive:
                handle.send(message)

    def facts(self) -> dict[str, Any]:
        """For run.json: the pool, each worker's clock check, and the workers that died."""
        return {
            "count": len(self.handles),
            "mode": type(self).__name__,
            # every worker's perf_counter_ns reads the parent's clock (within its ping)
            "one_clock": all(h.clock.one_clock for h in self.handles),
            "per_level": "auto" if self.count is None else self.count,
            "clock": [
                {"worker": h.index, "offset_ns": h.clock.offset_ns, "rtt_ns": h.clock.rtt_ns,
                 "one_clock": h.clock.one_clock, **getattr(h, "facts", {})}
                for h in self.handles
            ],
            "died": list(self.deaths),
        }


class _ProcessHandle:
    def __init__(self, index: int, proc: Any, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
        self.index, self.proc, self.reader, self.writer = index, proc, reader, writer
        self.alive = True
        self.clock = ClockCheck(0, 0)
        self.facts: dict[str, Any] = {"pid": proc.pid}

    def send(self, message: dict[str, Any]) -> None:
        if self.alive and not self.writer.is_closing():
            self.writer.write(encode(message))

    async def ask(self) -> dict[str, Any]:
        line = await self.reader.readline()
        if not line:
            raise ConnectionError("the worker exited")
        return decode(line)


class ProcessPool(WorkerSweep):
    """`size` local worker processes, each a fresh interpreter (`load.worker_proc`)."""

    def __init__(self, factory: BackendFactory, size: int, count: int | None) -> None:
        super().__init__(count, size)
        self.factory, self.size = factory, size
        self._procs: list[_ProcessHandle] = []
        self._readers: list[asyncio.Task[None]] = []

    async def __aenter__(self) -> ProcessPool:
        try:
            for index in range(self.size):
                self._procs.append(await self._spawn(index))
                self.handles.append(self._procs[-1])
            for handle in self._procs:
                handle.clock = await _ping(handle)
        except BaseException:
            await self._close()
            raise
        self._readers = [asyncio.create_task(self._read(h)) for h in self._procs]
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self._close()

    async def _spawn(self, index: int) -> _ProcessHandle:
        ours, theirs = socket.socketpair()
        proc = subprocess.Popen(
            [sys.executable, "-m", "servecap.load.worker_proc", str(theirs.fileno()),
             str(index), str(self.size)],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
        )
        theirs.close()
        try:
            await asyncio.to_thread(send_factory, ours, self.factory)
            reader, writer = await asyncio.open_unix_connection(sock=ours, limit=LINE_LIMIT)
        except OSError as exc:
            proc.kill()
            raise RunAborted(f"worker {index} did not start ({_exit_text(proc)})") from exc
        handle = _ProcessHandle(index, proc, reader, writer)
        try:
            hello = await asyncio.wait_for(handle.ask(), HELLO_S)
        except (TimeoutError, ConnectionError, ValueError) as exc:
            proc.kill()
            await asyncio.to_thread(proc.wait)
            raise RunAborted(f"worker {index} did not start ({_exit_text(proc)})") from exc
        handle.facts["pid"] = hello.get("pid", proc.pid)
        return handle

    async def _read(self, handle: _ProcessHandle) -> None:
        try:
            while line := await handle.reader.readline():
                self.deliver(handle.index, decode(line))
        except (ConnectionError, ValueError):
            pass
        handle.alive = False
        await _reap(handle.proc)
        if not getattr(self, "_closing", False):
            self.died(handle.index, _exit_text(handle.proc))

    async def _close(self) -> None:
        self._closing = True
        for handle in self.handles:
            handle.send({"op": "exit"})
        for task in self._readers:
            try:
                await asyncio.wait_for(asyncio.shield(task), 10)
            except TimeoutError:
                task.cancel()
        for handle in self._procs:
            await _reap(handle.proc)
            handle.writer.close()


async def _reap(proc: subprocess.Popen[bytes]) -> None:
    """Wait a little for a worker to exit, then kill it."""
    try:
        await asyncio.to_thread(proc.wait, 5)
    except subprocess.TimeoutExpired:
        proc.kill()
        await asyncio.to_thread(proc.wait)


async def _ping(handle: _ProcessHandle) -> ClockCheck:
    best: ClockCheck | None = None
    for _ in range(PINGS):
        t_send = now_ns()
        handle.send({"op": "ping", "t": t_send})
        answer = await asyncio.wait_for(handle.ask(), HELLO_S)
        t_back = now_ns()
        check = ClockCheck(int(answer["w"]) - (t_send + t_back) // 2, t_back - t_send)
        if best is None or check.rtt_ns < best.rtt_ns:
            best = check
    assert best is not None
    return best


def _exit_text(proc: subprocess.Popen[bytes]) -> str:
    code = proc.poll()
    if code is None:
        return f"pid {proc.pid} stopped answering"
    if code < 0:
        return f"pid {proc.pid} was killed by signal {-code}"
    return f"pid {proc.pid} exited with status {code}"


def usable_cores() -> int:
    """The cores this process may run on (its affinity), for `auto`."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        return os.cpu_count() or 1
