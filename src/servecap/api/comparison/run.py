"""`run_comparison`: two or more targets through the same workload, interleaved, repeated.

Order of work: every target is checked and preflighted (models listed, and all the same
unless allowed) before any load; then the comparison directory is created with one run
directory per target; each target warms up; then every (target, level, repeat) slot runs in
`load.interleave`'s order. Each slot draws a fresh request source from the seed, so every
target gets the same prompts in the same order at every level and repeat. After each slot
the target's summaries (all repeats of a level pooled) and `comparison.json` (each slot with
its request ids and its own level record) are rewritten, so a stopped comparison keeps what
it finished. The statistics and headline are computed at the end from the records.
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
from servecap.api.run.preflight import check_output_dir, ensure_file_limit
from servecap.api.run.progress import NullProgress, ProgressSink
from servecap.load.event_loop import loop_factory
from servecap.load.interleave import interleaved_order
from servecap.storage.run_dir import new_run_dir


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
        for side, (model, server) in zip(sides, found, strict=True):
            open_side(side, comp_dir, model, server)
        order = interleaved_order(list(by_name), len(levels), config.repeats, base.seed)
        total = len(sides) * base.warmup + config.repeats * sum(
            lv.n_requests for lv in levels) * len(sides)
        progress.started(total, str(comp_dir), found[0][0])
        stored = ComparisonFile.start(config, comp_dir, [s.describe() for s in sides], order,
                                      levels)
        try:
            for side in sides:
                await warm_up(side)
            for slot in order:
                side, level = by_name[slot.target], levels[slot.level_index]
                bucket = await run_slot(side, level, progress)
                stored.slots.append(slot_record(slot, level, bucket))
                save_side(side)
                write_comparison(comp_dir, stored)
            stored.status = "complete"
        except asyncio.CancelledError:
            stored.status = "incomplete"
            raise
        finally:
            _finish(sides, stored, comp_dir, config)
    return ComparisonOutcome(comp_dir, stored)


def _finish(
    sides: list[Side], stored: ComparisonFile, comp_dir: Path, config: CompareConfig
) -> None:
    if stored.status == "running":  # stopped by an error: what finished is kept
        stored.status = "incomplete"
    for side in sides:
        close_side(side, stored.status == "complete")
    if stored.status == "complete":
        stored.analyse({s.target.name: s.samples for s in sides}, config.slo)
    write_comparison(comp_dir, stored)


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
