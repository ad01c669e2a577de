"""One target of a comparison while it runs: its client, its run directory, its slots.

`api.comparison.run` drives every target from one event loop; `api.comparison.lockstep` drives each
from a process of its own. Both use these steps: preflight (no load), open the run
directory, warm up, run slots (one level of one repeat, from a fresh request source so that
every target gets the same prompts in the same order), save the pooled summaries, close.
A slot is a level of the run's own kinds run by the run's own engine pieces: the source
`run` builds (built-in prompts, a dataset, lengths, a trace), the level's own scheduler
inside the same observers (`load.sweep.run_level`), its planned count and steady-state
window, and the same summaries.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servecap.analysis.comparison import Repeats
from servecap.api.comparison.store import SlotRecord
from servecap.api.comparison.targets import Target
from servecap.api.run.observers import RunContext, level_observers
from servecap.api.run.outage import OutageWatch
from servecap.api.run.prefix_cache import PrefixCacheSetup, prefix_setup
from servecap.api.run.preflight import preflight
from servecap.api.run.progress import NullProgress, ProgressSink
from servecap.api.run.run import new_run_info
from servecap.api.run.run_config import RunConfig
from servecap.api.run.workload import build_source, client_extra_body
from servecap.client.http import StreamingClient, make_session
from servecap.core.cost import CostFields
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.run_info import RunInfo
from servecap.core.secrets import Secrets, split_url_credentials
from servecap.core.summary import LevelSummary
from servecap.kinds.base import LevelSpec
from servecap.kinds.closed import warmup_level
from servecap.kinds.io import LevelIO
from servecap.kinds.window import Window
from servecap.load.interleave import Slot
from servecap.load.sweep import run_level
from servecap.metrics.level import summarise_level
from servecap.storage.formats.br_out import write_partials_or_note
from servecap.storage.run_dir import (
    REQUESTS_FILE,
    RecordWriter,
    Run,
    new_run_dir,
    write_run_info,
    write_summaries,
)
from servecap.workload.source import RequestSource


@dataclass
class Side:
    """One target while the comparison runs."""

    target: Target
    config: RunConfig
    secrets: Secrets
    run_dir: Path | None = None
    info: RunInfo | None = None
    client: StreamingClient | None = None
    writer: RecordWriter | None = None
    ids: Iterator[int] = field(default_factory=itertools.count)
    samples: dict[LevelKey, Repeats] = field(default_factory=dict)
    observed: dict[LevelKey, dict[str, Any]] = field(default_factory=dict)
    planned: dict[LevelKey, int] = field(default_factory=dict)  # requests per repeat
    windows: dict[LevelKey, Window | None] = field(default_factory=dict)
    # the comparison's stop (a level stops scheduling once set) and this target's outage
    # watch, which sets it when the target is gone for good (`RunConfig.outage_s`)
    stop: asyncio.Event | None = None
    watch: OutageWatch | None = None
    # how the side runs a level: in this process, or split over its own worker processes
    # (`--workers`, `api.run.run_workers`), as `run` does
    run_level: Any = run_level
    pool: Any = None  # the worker pool, whose facts go into the side's run.json

    def watch_outage(self, stop: asyncio.Event) -> None:
        """Stop the comparison once this target answers nothing but failures for its
        config's `outage_s` (a comparison against a dead target measures nothing)."""
        self.stop = stop
        self.watch = OutageWatch(self.config.outage_s, stop)
    prefix: PrefixCacheSetup | None = None  # the cache's reset before each slot, if any

    def describe(self) -> dict[str, Any]:
        """The target's entry in `comparison.json`."""
        return {"name": self.target.name, "target": self.target.describe(),
                "run_dir": self.run_dir.name if self.run_dir else None,
                "model": self.info.config.get("model") if self.info else None}


def target_cost(shared: CostFields | None, target: Target) -> CostFields | None:
    """`--gpus`/`--gpu-hour-cost` for every target, this target's `--target-gpus` over."""
    if target.gpus is None:
        return shared
    return (shared or CostFields()).model_copy(update={"gpus": target.gpus})


def new_side(base: RunConfig, target: Target, url: str) -> Side:
    """The target's own config (name, model, URL, extra body over the shared workload)."""
    client = base.client.model_copy(update={"base_url": url})
    own = base.model_copy(update={
        "name": target.name, "model": target.model or base.model, "client": client,
        "extra_body": {**base.extra_body, **target.extra_body},
        "cost": target_cost(base.cost, target),
    })
    bare, secrets = split_url_credentials(own.client, Secrets.from_env(base.client.api_key_env))
    return Side(target, own.model_copy(update={"client": bare}), secrets)


async def preflight_side(
    stack: contextlib.AsyncExitStack, side: Side, pool: int
) -> tuple[str, dict[str, Any]]:
    """The target's model and server facts; its client, on a session `stack` closes."""
    session = await stack.enter_async_context(
        make_session(side.config.client, pool, side.secrets.http_headers())
    )
    model, server = await preflight(session, side.config, side.secrets,
                                    f"target {side.target.name}: ")
    side.prefix = prefix_setup(side.config, server, side.secrets.http_headers())
    side.client = StreamingClient(
        session, side.config.client, model, side.config.endpoint,
        side.config.output_tokens, client_extra_body(side.config),
    )
    return side.secrets.redact(model) or model, server


def open_side(side: Side, comp_dir: Path, model: str, server: dict[str, Any]) -> None:
    side.info = new_run_info(side.config, model, server)
    side.info.prefix_cache = side.prefix.describe() if side.prefix is not None else {}
    side.run_dir = new_run_dir(comp_dir, side.target.name)
    write_run_info(side.run_dir, side.info)
    side.writer = RecordWriter(side.run_dir / REQUESTS_FILE)


def _sink(side: Side, bucket: list[RequestRecord], progress: ProgressSink) -> Any:
    """Every ended record: redacted (servers echo credentials), written, kept, counted."""
    assert side.writer is not None
    writer = side.writer

    def sink(record: RequestRecord) -> None:
        record.detail = side.secrets.redact(record.detail)
        writer.write(record)
        bucket.append(record)
        progress.request_done(record)
        if side.watch is not None:
            side.watch.observe(record)

    return sink


def _source(side: Side) -> RequestSource:
    """What `run` would send with this config, from its start (the same for every target)."""
    return build_source(side.config)


async def warm_up(side: Side) -> None:
    if side.config.warmup:
        assert side.client is not None
        io = LevelIO(side.client, _source(side), _sink(side, [], NullProgress()), side.ids)
        await side.run_level(warmup_level(side.config.warmup), io)


async def run_slot(side: Side, level: LevelSpec, progress: ProgressSink) -> list[RequestRecord]:
    """One level of one target, with a fresh source: the same prompts for every target."""
    assert side.client is not None and side.writer is not None
    bucket: list[RequestRecord] = []
    observed: dict[str, Any] = {}
    progress.level_started(level.key, level.n_requests)
    io = LevelIO(side.client, _source(side), _sink(side, bucket, progress), side.ids,
                 side.stop)
    await side.run_level(level, io, level_observers(level, RunContext(prefix=side.prefix)),
                         observed)
    side.observed[level.key] = observed
    side.planned[level.key] = level.planned_requests()
    side.windows[level.key] = level.window()
    side.samples.setdefault(level.key, []).append(bucket)
    return bucket


def save_side(side: Side) -> list[LevelSummary]:
    """run.json and the summaries, each level's repeats pooled; the summaries."""
    assert side.run_dir is not None and side.info is not None
    levels = [
        summarise_level(
            key, [r for rep in reps for r in rep], side.observed.get(key),
            side.planned.get(key, 0) * len(reps), side.windows.get(key),
        )
        for key, reps in sorted(side.samples.items())
    ]
    if side.pool is not None:
        side.info.workers = side.pool.facts()
    write_run_info(side.run_dir, side.info)
    write_summaries(side.run_dir, levels)
    return levels


def close_side(side: Side, complete: bool) -> OSError | None:
    """Close the writer and save run.json and the summaries, each whatever the other did
    (a full disk fails both, and the first failure must not hide the save); returns the
    first write failure, if any."""
    failure: OSError | None = None
    if side.writer is not None:
        try:
            side.writer.close()
        except OSError as exc:
            failure = exc
    if side.info is None:
        return failure
    side.info.status = "complete" if complete and failure is None else "incomplete"
    if failure is not None:
        side.info.stop_reason = f"write failed: {failure.strerror or failure}"
    elif side.watch is not None and side.watch.declared:
        side.info.stop_reason = side.watch.reason()
    try:
        levels = save_side(side)
    except OSError as exc:
        return failure or exc
    assert side.run_dir is not None
    # its BR partials, as a single run's (a failure to write them is a note)
    write_partials_or_note(Run(path=side.run_dir, info=side.info, levels=levels))
    return failure


def slot_summary(level: LevelSpec, bucket: list[RequestRecord]) -> LevelSummary | None:
    if not bucket:
        return None
    return summarise_level(level.key, bucket, None, level.planned_requests(), level.window())


def slot_record(slot: Slot, level: LevelSpec, bucket: list[RequestRecord]) -> SlotRecord:
    """The slot's entry in `comparison.json`: its request ids and its own level record."""
    ids = [r.request_id for r in bucket]
    summary = slot_summary(level, bucket)
    return SlotRecord(
        position=slot.position, target=slot.target, level=str(level.key), repeat=slot.repeat,
        first_id=min(ids) if ids else None, last_id=max(ids) if ids else None,
        n_records=len(bucket), summary=summary.stored() if summary else None,
    )
