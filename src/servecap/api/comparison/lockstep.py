"""`run_lockstep`: a comparison whose targets each run in a process of their own.

Each target's client lives in its own process (a client that shares an interpreter with
other streams stamps late), driven by the parent one slot at a time over a queue:
preflight, open its run directory and warm up, run the slot it is sent, close. The parent
keeps `comparison.json` as `api.comparison.run` does, and reads the records back from disk for the
statistics at the end.

Two schedules: `lockstep` (the demo's) sends every target the same (repeat, level) at once
and waits for all of them before the next, so every level runs on all targets at the same
moments and drift on the machine hits them alike, in the time of the slowest target rather
than the sum; `interleaved` sends one slot at a time in `load.interleave`'s order, exactly
what `servecap compare` runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import queue
from collections.abc import Callable, Sequence
from dataclasses import asdict
from itertools import groupby
from pathlib import Path
from typing import Any, Literal

from servecap.api.comparison.config import CompareConfig
from servecap.api.comparison.run import ComparisonOutcome, prepare, servers
from servecap.api.comparison.side import (
    Side,
    close_side,
    new_side,
    open_side,
    preflight_side,
    run_slot,
    save_side,
    slot_record,
    slot_summary,
    warm_up,
)
from servecap.api.comparison.store import (
    ComparisonFile,
    SlotRecord,
    load_comparison,
    write_comparison,
)
from servecap.api.comparison.targets import Target, check_models
from servecap.api.run.progress import NullProgress, ProgressSink
from servecap.api.run.queue_progress import QueueProgress
from servecap.api.run.run_config import RunConfig
from servecap.core.errors import UserInputError
from servecap.kinds.base import LevelSpec
from servecap.load.event_loop import loop_factory
from servecap.load.interleave import Slot, interleaved_order
from servecap.storage.run_dir import new_run_dir

Schedule = Literal["lockstep", "interleaved"]
PROGRESS_EVENTS = ("started", "level_started", "request_done", "level_done")
_POLL_S = 0.5
_CLOSE_WAIT_S = 30.0


def _worker(target: Target, url: str, base: dict[str, Any], pool: int, commands: Any,
            events: Any) -> None:
    """Child process: one target's client, serving the parent's commands."""
    name = target.name
    try:
        with asyncio.Runner(loop_factory=loop_factory()) as runner:
            runner.run(_serve(target, url, RunConfig.model_validate(base), pool, commands,
                              events))
    except BaseException as exc:  # the parent reports it; a child has no console of its own
        events.put((name, "error", (f"{type(exc).__name__}: {exc}",)))


async def _serve(target: Target, url: str, base: RunConfig, pool: int, commands: Any,
                 events: Any) -> None:
    """Preflight, report ready (or refused), then do each command until `close`."""
    child = _Child(target, new_side(base, target, url), QueueProgress(events, target.name),
                   base.load_spec().levels(), events)
    loop = asyncio.get_running_loop()
    async with contextlib.AsyncExitStack() as stack:
        try:
            child.model, child.server = await preflight_side(stack, child.side, pool)
        except UserInputError as exc:
            events.put((target.name, "refused", (str(exc),)))
            return
        events.put((target.name, "ready", (child.model, child.server)))
        try:
            while await child.do(*await loop.run_in_executor(None, commands.get)):
                pass
        finally:
            if child.side.run_dir is not None:
                failure = close_side(child.side, child.complete)
                if failure is not None:
                    raise failure
            events.put((target.name, "closed", ()))


class _Child:
    """One target's side in its process: what the parent's commands do to it."""

    def __init__(self, target: Target, side: Side, progress: QueueProgress,
                 levels: Sequence[LevelSpec], events: Any) -> None:
        self.name, self.side, self.progress = target.name, side, progress
        self.levels, self.events = levels, events
        self.model: str = ""
        self.server: dict[str, Any] = {}
        self.complete = False

    async def do(self, command: str, args: tuple) -> bool:
        """Carry out one command; False when it was the last (`close`)."""
        if command == "open":
            comp_dir, repeats = args
            open_side(self.side, Path(comp_dir), self.model, self.server)
            # the warm-up is not counted: its records go to no sink
            total = repeats * sum(lv.n_requests for lv in self.levels)
            self.progress.started(total, str(self.side.run_dir), self.model)
            await warm_up(self.side)
            self.events.put((self.name, "opened", (self.side.describe(),)))
            return True
        if command == "slot":
            slot = Slot(*args)
            level = self.levels[slot.level_index]
            bucket = await run_slot(self.side, level, self.progress)
            save_side(self.side)
            summary = slot_summary(level, bucket)
            if summary is not None:
                self.progress.level_done(summary)
            self.events.put((self.name, "slot", (asdict(slot_record(slot, level, bucket)),)))
            return True
        self.complete = bool(args[0])  # "close"
        return False


class _Workers:
    """The targets' processes and the one queue every event comes back on."""

    def __init__(self, config: CompareConfig, urls: dict[str, str], pool: int,
                 sinks: dict[str, ProgressSink]) -> None:
        ctx = multiprocessing.get_context("spawn")  # the parent may hold threads (a UI)
        self.events = ctx.Queue()
        self.sinks = sinks
        base = config.workload.model_dump(mode="json")
        self.commands = {t.name: ctx.Queue() for t in config.targets}
        self.procs = {
            t.name: ctx.Process(target=_worker, name=f"servecap-compare-{t.name}",
                                args=(t, urls[t.name], base, pool, self.commands[t.name],
                                      self.events), daemon=True)
            for t in config.targets
        }
        for proc in self.procs.values():
            proc.start()

    def send(self, name: str, command: str, *args: Any) -> None:
        self.commands[name].put((command, args))

    def collect(self, kind: str, names: list[str], timeout_s: float | None = None,
                ) -> dict[str, tuple]:
        """Wait for `kind` from each of `names`, forwarding progress on the way."""
        got: dict[str, tuple] = {}
        waited = 0.0
        while len(got) < len(set(names)):
            try:
                name, event, args = self.events.get(timeout=_POLL_S)
            except queue.Empty:
                waited += _POLL_S
                missing = [n for n in names if n not in got]
                if timeout_s is not None and waited >= timeout_s:
                    raise RuntimeError(f"no {kind!r} from {', '.join(missing)}") from None
                dead = [n for n in missing if not self.procs[n].is_alive()]
                if dead:
                    raise RuntimeError(f"target {dead[0]}'s process ended unexpectedly") from None
                continue
            if event == kind:
                got[name] = args
            elif event == "refused":
                raise UserInputError(args[0])
            elif event == "error":
                raise RuntimeError(f"target {name}: {args[0]}")
            elif event in PROGRESS_EVENTS:
                getattr(self.sinks[name], event)(*args)
        return got

    def close(self, complete: bool) -> None:
        alive = [n for n, p in self.procs.items() if p.is_alive()]
        for name in alive:
            self.send(name, "close", complete)
        with contextlib.suppress(RuntimeError, UserInputError):
            self.collect("closed", alive, timeout_s=_CLOSE_WAIT_S)
        for proc in self.procs.values():
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5)


def _groups(order: list[Slot], schedule: Schedule) -> list[list[Slot]]:
    if schedule == "interleaved":
        return [[slot] for slot in order]
    return [list(g) for _, g in groupby(order, key=lambda s: (s.repeat, s.level_index))]


def run_lockstep(
    config: CompareConfig, urls: dict[str, str],
    progress_for: Callable[[str], ProgressSink] | None = None,
    schedule: Schedule = "lockstep",
) -> ComparisonOutcome:
    """Run the comparison with a process per target; see the module's text."""
    _, levels, pool = prepare(config, urls)
    names = [t.name for t in config.targets]
    sinks = {n: progress_for(n) if progress_for else NullProgress() for n in names}
    workers = _Workers(config, urls, pool, sinks)
    stored: ComparisonFile | None = None
    comp_dir: Path | None = None
    try:
        ready = workers.collect("ready", names)
        check_models({n: ready[n][0] for n in names}, config.allow_different_models)
        comp_dir = new_run_dir(Path(config.workload.out_dir), "compare")
        for name in names:
            workers.send(name, "open", str(comp_dir), config.repeats)
        opened = workers.collect("opened", names)
        order = interleaved_order(names, len(levels), config.repeats, config.workload.seed)
        stored = ComparisonFile.start(config, comp_dir, [opened[n][0] for n in names], order,
                                      levels)
        stored.schedule = schedule
        for group in _groups(order, schedule):
            for slot in group:
                workers.send(slot.target, "slot", slot.position, slot.target,
                             slot.level_index, slot.repeat)
            done = workers.collect("slot", [s.target for s in group])
            stored.slots += [SlotRecord(**done[s.target][0]) for s in group]
            write_comparison(comp_dir, stored)
        stored.status = "complete"
    finally:
        workers.close(stored is not None and stored.status == "complete")
        if stored is not None and comp_dir is not None:
            _finish(stored, comp_dir, config)
    assert comp_dir is not None and stored is not None
    return ComparisonOutcome(comp_dir, stored)


def _finish(stored: ComparisonFile, comp_dir: Path, config: CompareConfig) -> None:
    if stored.status == "running":  # stopped by an error: what finished is kept
        stored.status = "incomplete"
    if stored.status == "complete":
        write_comparison(comp_dir, stored)
        _, samples = load_comparison(comp_dir)  # the records as the children wrote them
        stored.analyse(samples, config.slo)
    write_comparison(comp_dir, stored)


def run_in_processes(
    config: CompareConfig, schedule: Schedule = "lockstep", time_scale: float = 1.0,
    progress_for: Callable[[str], ProgressSink] | None = None,
) -> ComparisonOutcome:
    """Start the simulator targets, run the comparison a process per target, stop them."""
    with servers(config.targets, time_scale) as urls:
        return run_lockstep(config, urls, progress_for, schedule)
