"""`--ray ADDRESS`: the same workers as Ray actors, spread over a cluster's nodes.

One actor per load core (`--workers N`, default every CPU the cluster has), placed by a
placement group with one 1-CPU bundle each, spread over the nodes. An actor runs
`load.worker_core.WorkerCore`, the same level code a local worker process runs, on its own
uvloop event loop in a thread of its own; the parent polls each actor for its messages, so
rows come back in batches. Each actor's clock is measured against the parent's by the ping
with the least round trip; where the two differ (another host) the shared start time and
the rows move by that offset, so the merge is exact in the parent's clock, and an offset
above 1 ms is warned about. Ray is an extra (`pip install 'servecap[ray]'`), imported only
here, and only when a run asks for it. Nothing here stops the cluster: it removes only what
it made (its actors and placement group) and disconnects.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from pathlib import Path
from typing import Any

from servecap.core.clock import now_ns
from servecap.core.errors import RunAborted, bad_setting
from servecap.load.event_loop import loop_factory
from servecap.load.worker_core import BackendFactory, WorkerCore
from servecap.load.workers import PINGS, ClockCheck, WorkerSweep

POLL_S = 0.05  # an actor answers a poll as soon as it has rows, else after this long
OFFSET_WARN_NS = 1_000_000
READY_S = 120.0


class RayWorker:
    """The actor's body (made a Ray actor class by `ray.remote` when a run needs it)."""

    def __init__(self, factory: BackendFactory, index: int = 0, size: int = 1) -> None:
        self._messages: deque[dict[str, Any]] = deque()
        self._ready = threading.Event()
        self._wake = threading.Condition()
        self._error: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._core: WorkerCore | None = None
        self._thread = threading.Thread(
            target=self._main, args=(factory, index, size), daemon=True
        )
        self._thread.start()

    def _emit(self, message: dict[str, Any]) -> None:
        with self._wake:
            self._messages.append(message)
            self._wake.notify()

    def _main(self, factory: BackendFactory, index: int, size: int) -> None:
        with asyncio.Runner(loop_factory=loop_factory()) as runner:
            runner.run(self._serve(factory, index, size))

    async def _serve(self, factory: BackendFactory, index: int, size: int) -> None:
        try:
            async with factory(index, size) as (backend, source):
                self._loop = asyncio.get_running_loop()
                self._core = WorkerCore(backend, source, self._emit)
                self._closing = asyncio.Event()
                self._ready.set()
                await self._closing.wait()
                self._core.cancel()
                await self._core.wait()
        except Exception as exc:
            self._error = f"{type(exc).__name__}: {exc}"
            self._ready.set()

    def ready(self) -> dict[str, Any]:
        """Where this actor runs, once its client is built."""
        import ray

        self._ready.wait(READY_S)
        context = ray.get_runtime_context()
        return {"pid": os.getpid(), "node_id": context.get_node_id(),
                "node_ip": ray.util.get_node_ip_address(), "error": self._error}

    def clock(self) -> int:
        return now_ns()

    def command(self, message: dict[str, Any]) -> None:
        """`level`, `stop`, `cancel` or `exit`, run on the actor's own loop."""
        loop, core = self._loop, self._core
        if loop is None or core is None:
            return
        op = message["op"]
        if op == "level":
            loop.call_soon_threadsafe(core.start, message)
        elif op == "stop":
            loop.call_soon_threadsafe(core.stop)
        elif op == "cancel":
            loop.call_soon_threadsafe(core.cancel)
        elif op == "exit":
            loop.call_soon_threadsafe(self._closing.set)

    def drain(self, wait_s: float) -> list[dict[str, Any]]:
        """Every message since the last poll (waiting up to `wait_s` for the first)."""
        with self._wake:
            if not self._messages:
                self._wake.wait(wait_s)
            batch = list(self._messages)
            self._messages.clear()
        return batch


class _RayHandle:
    def __init__(self, index: int, actor: Any, where: dict[str, Any]) -> None:
        self.index, self.actor = index, actor
        self.alive = True
        self.clock = ClockCheck(0, 0)
        self.facts: dict[str, Any] = {
            "pid": where["pid"], "node_id": where["node_id"], "node_ip": where["node_ip"],
        }
        self._outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.sender = asyncio.create_task(self._send_in_order())

    def send(self, message: dict[str, Any]) -> None:
        if self.alive:
            self._outbox.put_nowait(message)

    async def _send_in_order(self) -> None:
        # a threaded actor may run two calls at once: one command at a time keeps order
        while True:
            message = await self._outbox.get()
            try:
                await self.actor.command.remote(message)
            except Exception:  # the actor is gone: its poll reports how
                return


class RayPool(WorkerSweep):
    """The run's workers as Ray actors on the cluster at `address`."""

    def __init__(self, factory: BackendFactory, address: str, count: int | None) -> None:
        super().__init__(count, count or 1)
        self.factory, self.address = factory, address
        self._actors: list[_RayHandle] = []
        self._pollers: list[asyncio.Task[None]] = []
        self._group: Any = None
        self._closing = False

    async def __aenter__(self) -> RayPool:
        ray = _import_ray()
        self._joined = not ray.is_initialized()  # a caller inside a Ray job keeps its own
        if self._joined:
            _connect(ray, self.address)
        try:
            await self._start(ray)
        except BaseException:
            await self._close(ray)
            raise
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self._close(_import_ray())

    async def _start(self, ray: Any) -> None:
        from ray.util.placement_group import placement_group
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        size = self.count or max(1, int(ray.cluster_resources().get("CPU", 1)))
        self.count = self.cores = size  # a cluster asked for runs every level on all of it
        self._group = placement_group([{"CPU": 1}] * size, strategy="SPREAD")
        await asyncio.wait_for(self._group.ready(), READY_S)
        actor_class = ray.remote(num_cpus=1, max_concurrency=2)(RayWorker)
        # the actors import the servecap this parent runs (a checkout, not only a wheel)
        package_root = str(Path(__file__).resolve().parents[2])
        env = {"PYTHONPATH": os.pathsep.join(
            p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p)}
        for index in range(size):
            actor = actor_class.options(
                scheduling_strategy=PlacementGroupSchedulingStrategy(
                    placement_group=self._group, placement_group_bundle_index=index),
                runtime_env={"env_vars": env},
            ).remote(self.factory, index, size)
            where = await asyncio.wait_for(actor.ready.remote(), READY_S)
            if where.get("error"):
                raise RunAborted(f"Ray worker {index} could not start: {where['error']}")
            self._actors.append(_RayHandle(index, actor, where))
            self.handles.append(self._actors[-1])
        for handle in self._actors:
            handle.clock = await _ping(handle)
        self._pollers = [asyncio.create_task(self._poll(h)) for h in self._actors]

    async def _poll(self, handle: _RayHandle) -> None:
        while not self._closing:
            try:
                batch = await handle.actor.drain.remote(POLL_S)
            except Exception as exc:  # RayActorError: the actor or its node died
                handle.alive = False
                if not self._closing:
                    self.died(handle.index, f"(Ray actor on {handle.facts['node_ip']}) died: "
                                            f"{type(exc).__name__}")
                return
            for message in batch:
                self.deliver(handle.index, message)

    async def _close(self, ray: Any) -> None:
        self._closing = True
        for handle in self.handles:
            handle.send({"op": "exit"})
        await asyncio.sleep(POLL_S * 2)
        for task in self._pollers:
            task.cancel()
        await asyncio.gather(*self._pollers, return_exceptions=True)
        for handle in self._actors:
            handle.sender.cancel()
            ray.kill(handle.actor)
        if self._group is not None:
            from ray.util.placement_group import remove_placement_group

            remove_placement_group(self._group)
        if getattr(self, "_joined", False):
            ray.shutdown()  # this driver's connection only; the cluster keeps running

    def facts(self) -> dict[str, Any]:
        facts = super().facts()
        facts["address"] = self.address
        facts["warnings"] = [
            f"worker {c['worker']} on {c.get('node_ip')}: clock offset "
            f"{c['offset_ns'] / 1e6:.2f} ms from the parent's"
            for c in facts["clock"] if abs(c["offset_ns"]) > OFFSET_WARN_NS
        ]
        return facts


async def _ping(handle: _RayHandle) -> ClockCheck:
    best: ClockCheck | None = None
    for _ in range(PINGS):
        t_send = now_ns()
        remote = await handle.actor.clock.remote()
        t_back = now_ns()
        check = ClockCheck(int(remote) - (t_send + t_back) // 2, t_back - t_send)
        if best is None or check.rtt_ns < best.rtt_ns:
            best = check
    assert best is not None
    return best


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise bad_setting("ray", "needs Ray: pip install 'servecap[ray]'") from exc
    return ray


def _connect(ray: Any, address: str) -> None:
    """Join the cluster as a driver; on a loopback cluster bind loopback only."""
    host = address.removeprefix("ray://").rsplit(":", 1)[0]
    options: dict[str, Any] = {"address": address, "log_to_driver": False,
                               "logging_level": "WARNING"}
    if host in ("127.0.0.1", "localhost"):
        options["_node_ip_address"] = "127.0.0.1"
    try:
        ray.init(**options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise bad_setting("ray", f"{address}: cannot join the cluster ({exc})") from exc
