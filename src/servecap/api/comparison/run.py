"""`run_comparison`: two or more targets through the same workload, interleaved, repeated.

Order of work: every target is checked and preflighted (models listed, and all the same
unless allowed) before any load; then the comparison directory is created with one run
directory per target; each target warms up; then every (target, level, repeat) slot runs in
`load.interleave`'s order. Each slot draws a fresh request source from the seed, so every
target gets the same prompts in the same order at every level and repeat. After each slot
the target's summaries (all repeats of a level pooled) and `comparison.json` (each slot with
its request ids and its own level record) are rewritten, so a stopped comparison keeps what
it finished. The statistics and headline are computed at the end from the records.

As a run does, a comparison stops when a target is gone for good (failures alone for its
`outage_s`) and when the disk fills (a reserve keeps room for the last save); either way it
ends incomplete with its reason, keeps every row, and raises `RunAborted` (exit 1).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from servecap.api.comparison.config import CompareConfig
from servecap.api.comparison.side import (
    Side,
    close_side,
    new_side,
    open_side,
    preflight_side,
    run_slot,
    save_side,
    slot_record,
    warm_up,
)
from servecap.api.comparison.store import ComparisonFile, write_comparison
from servecap.api.comparison.targets import Target, check_models
from servecap.api.run.plans import StaticPlan
from servecap.api.run.preflight import check_output_dir, ensure_file_limit
from servecap.api.run.progress import NullProgress, ProgressSink
from servecap.api.run.run_workers import worker_pool
from servecap.core.errors import RunAborted
from servecap.load.event_loop import loop_factory
from servecap.load.interleave import Slot, interleaved_order
from servecap.storage.run_dir import new_run_dir
from servecap.storage.safe_files import DiskReserve, hold_reserve


@dataclass
class ComparisonOutcome:
    path: Path
    file: ComparisonFile


@contextlib.contextmanager
def servers(targets: list[Target], time_scale: float = 1.0) -> Iterator[dict[str, str]]:
    """The base URL of every target, starting the simulator targets as processes."""
    from servecap.sim import start_server_process

    with contextlib.ExitStack() as stack:
        urls: dict[str, str] = {}
        for t in targets:
            if t.sim_profile is None:
                urls[t.name] = t.base_url or ""
                continue
            scale = time_scale / t.sim_slowdown
            server = stack.enter_context(start_server_process(t.sim_profile, time_scale=scale))
            urls[t.name] = server.base_url
        yield urls


def prepare(config: CompareConfig, urls: dict[str, str]) -> tuple[list[Side], list, int]:
    """Checks before any connection (output dir, file limit) and each target's config;
    returns the sides, the plan's levels and the pool size per target."""
    base = config.workload
    check_output_dir(Path(base.out_dir))
    plan = base.load_spec()
    pool = plan.max_in_flight()
    ensure_file_limit(pool * len(config.targets))
    return [new_side(base, t, urls[t.name]) for t in config.targets], list(plan.levels()), pool


async def run_comparison_async(
    config: CompareConfig, urls: dict[str, str], progress: ProgressSink | None = None,
) -> ComparisonOutcome:
    """Preflight every target, then run the interleaved slots; see the module's text."""
    progress = progress or NullProgress()
    base = config.workload
    sides, levels, pool = prepare(config, urls)
    by_name = {s.target.name: s for s in sides}
    async with contextlib.AsyncExitStack() as stack:
        found = [await preflight_side(stack, side, pool) for side in sides]
        check_models({s.target.name: m for s, (m, _) in zip(sides, found, strict=True)},
                     config.allow_different_models)
        comp_dir = new_run_dir(Path(base.out_dir), "compare")
        reserve = hold_reserve(comp_dir)
        stop = asyncio.Event()
        for side, (model, server) in zip(sides, found, strict=True):
            open_side(side, comp_dir, model, server)
            side.watch_outage(stop)
            await _split_over_workers(stack, side, model)
        order = interleaved_order(list(by_name), len(levels), config.repeats, base.seed)
        total = len(sides) * base.warmup + config.repeats * sum(
            lv.n_requests for lv in levels) * len(sides)
        progress.started(total, str(comp_dir), found[0][0])
        stored = ComparisonFile.start(config, comp_dir, [s.describe() for s in sides], order,
                                      levels)
        failure: OSError | None = None
        try:
            await _run_slots(sides, by_name, levels, order, stored, comp_dir, progress, stop)
        except asyncio.CancelledError:
            stored.status, stored.stop_reason = "incomplete", "interrupted"
            raise
        except OSError as exc:
            failure = exc
        finally:
            failure = _finish(sides, stored, comp_dir, config, reserve, failure)
    _raise_if_stopped(comp_dir, sides, failure)
    return ComparisonOutcome(comp_dir, stored)


async def _split_over_workers(stack: contextlib.AsyncExitStack, side: Side, model: str
                              ) -> None:
    """The side's own worker processes (`--workers`, `--ray`), sized as `run` sizes them;
    none where one process keeps up (then the side runs its levels in this one)."""
    plan = StaticPlan(side.config.load_spec())
    pool = await stack.enter_async_context(
        worker_pool(side.config, model, side.secrets.http_headers(), plan))
    if pool is not None:
        side.run_level, side.pool = pool.run_level, pool


async def _run_slots(
    sides: list[Side], by_name: dict[str, Side], levels: list, order: list[Slot],
    stored: ComparisonFile, comp_dir: Path, progress: ProgressSink, stop: asyncio.Event,
) -> None:
    """Warm every target up, then every slot in order, saving after each; until `stop`."""
    for side in sides:
        await warm_up(side)
    for slot in order:
        if stop.is_set():
            return
        side, level = by_name[slot.target], levels[slot.level_index]
        bucket = await run_slot(side, level, progress)
        stored.slots.append(slot_record(slot, level, bucket))
        save_side(side)
        write_comparison(comp_dir, stored)
    if not stop.is_set():
        stored.status = "complete"


def _finish(
    sides: list[Side], stored: ComparisonFile, comp_dir: Path, config: CompareConfig,
    reserve: DiskReserve | None, failure: OSError | None,
) -> OSError | None:
    """Close every target and save `comparison.json`, each step whatever the others did;
    returns the first write failure."""
    if reserve is not None:
        reserve.release()  # the room the last saves need
    if stored.status == "running":  # stopped by an error or an outage: what finished is kept
        stored.status = "incomplete"
    for side in sides:
        closed = close_side(side, stored.status == "complete")
        failure = failure or closed
    if failure is not None:
        stored.status = "incomplete"
        stored.stop_reason = f"write failed: {failure.strerror or failure}"
    else:
        stored.stop_reason = stored.stop_reason or _outage_reason(sides)
    if stored.status == "complete":
        stored.analyse({s.target.name: s.samples for s in sides}, config.slo)
    try:
        write_comparison(comp_dir, stored)
    except OSError as exc:
        failure = failure or exc
    return failure


def _outage_reason(sides: list[Side]) -> str | None:
    for side in sides:
        if side.watch is not None and side.watch.declared:
            return f"target {side.target.name}: {side.watch.reason()}"
    return None


def _raise_if_stopped(comp_dir: Path, sides: list[Side], failure: OSError | None) -> None:
    """A full disk or a target gone for good ends the command non-zero, what was measured
    kept."""
    if failure is not None:
        raise RunAborted(f"comparison stopped: cannot write results in {comp_dir} "
                         f"({failure.strerror or failure}); the requests recorded so far "
                         "are kept")
    reason = _outage_reason(sides)
    if reason is not None:
        raise RunAborted(f"comparison stopped: {reason}; what was measured is kept in "
                         f"{comp_dir}")


def run_comparison(
    config: CompareConfig, progress: ProgressSink | None = None, time_scale: float = 1.0
) -> ComparisonOutcome:
    """Start the simulator targets, run the comparison, stop them (synchronous)."""
    with (
        servers(config.targets, time_scale) as urls,
        asyncio.Runner(loop_factory=loop_factory()) as runner,
    ):
        return runner.run(run_comparison_async(config, urls, progress))


__all__ = ["ComparisonOutcome", "run_comparison"]
