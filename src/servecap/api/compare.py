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
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from servecap.analysis.comparison import Repeats
from servecap.api.compare_store import ComparisonFile, SlotRecord, write_comparison
from servecap.api.compare_targets import Target, check_models
from servecap.api.loop import loop_factory
from servecap.api.observers import level_observers
from servecap.api.preflight import (
    check_output_dir,
    describe_server,
    ensure_file_limit,
    resolve_model,
)
from servecap.api.progress import NullProgress, ProgressSink
from servecap.api.run import _new_info
from servecap.client.http import StreamingClient, make_session
from servecap.core.config import SLO, RunConfig
from servecap.core.errors import UserInputError
from servecap.core.level_key import LevelKey
from servecap.core.load_spec import LevelSpec, warmup_level
from servecap.core.records import RequestRecord
from servecap.core.run_info import RunInfo
from servecap.core.secrets import Secrets, split_url_credentials
from servecap.load.interleave import Slot, interleaved_order
from servecap.load.scheduler import LevelIO
from servecap.load.sweep import run_level
from servecap.metrics.level import summarise_level
from servecap.storage.run_dir import (
    REQUESTS_FILE,
    RecordWriter,
    new_run_dir,
    write_run_info,
    write_summaries,
)
from servecap.workload.source import builtin_source


@dataclass
class CompareConfig:
    """What `servecap compare` was asked: the targets, the shared workload, the repeats."""

    targets: list[Target]
    workload: RunConfig  # its name, model, base URL and extra body are per target
    repeats: int = 3
    allow_different_models: bool = False
    slo: SLO = field(default_factory=SLO)
    # (baseline, compared) names; empty: every target against the first
    pairs: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class _Side:
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


@dataclass
class ComparisonOutcome:
    path: Path
    file: ComparisonFile


def _target_config(base: RunConfig, target: Target, url: str) -> RunConfig:
    client = base.client.model_copy(update={"base_url": url})
    return base.model_copy(update={
        "name": target.name, "model": target.model or base.model, "client": client,
        "extra_body": {**base.extra_body, **target.extra_body},
    })


@contextlib.contextmanager
def _servers(targets: list[Target], time_scale: float = 1.0) -> Iterator[dict[str, str]]:
    """The base URL of every target, starting the simulator targets as processes."""
    from servecap.sim.runner import start_server_process

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


async def _preflight(stack: contextlib.AsyncExitStack, side: _Side, pool: int) -> tuple[str, dict]:
    session = await stack.enter_async_context(
        make_session(side.config.client, pool, side.secrets.http_headers())
    )
    try:
        model, models = await resolve_model(session, side.config)
    except UserInputError as exc:  # it may list what the server echoed back
        message = f"target {side.target.name}: {exc}"
        raise UserInputError(side.secrets.redact(message) or "preflight failed") from None
    model = side.secrets.redact(model) or model
    server = side.secrets.redact_tree(await describe_server(session, side.config.client, models))
    side.client = StreamingClient(
        session, side.config.client, model, side.config.endpoint,
        side.config.output_tokens, side.config.extra_body,
    )
    return model, server


def _open_side(side: _Side, comp_dir: Path, model: str, server: dict[str, Any]) -> None:
    side.info = _new_info(side.config, model, server)
    side.run_dir = new_run_dir(comp_dir, side.target.name)
    write_run_info(side.run_dir, side.info)
    side.writer = RecordWriter(side.run_dir / REQUESTS_FILE)


def _sink(side: _Side, bucket: list[RequestRecord], progress: ProgressSink) -> Any:
    """Every ended record: redacted (servers echo credentials), written, kept, counted."""
    assert side.writer is not None
    writer = side.writer

    def sink(record: RequestRecord) -> None:
        record.detail = side.secrets.redact(record.detail)
        writer.write(record)
        bucket.append(record)
        progress.request_done(record)

    return sink


async def _run_slot(side: _Side, level: Any, progress: ProgressSink) -> list[RequestRecord]:
    """One level of one target, with a fresh source: the same prompts for every target."""
    assert side.client is not None and side.writer is not None
    cfg = side.config
    source = builtin_source(cfg.input_tokens, cfg.output_tokens, cfg.seed)
    bucket: list[RequestRecord] = []
    sink = _sink(side, bucket, progress)
    observed: dict[str, Any] = {}
    progress.level_started(level.key, level.n_requests)
    await run_level(level, LevelIO(side.client, source, sink, side.ids), level_observers(level),
                    observed)
    side.observed[level.key] = observed
    side.planned[level.key] = level.n_requests
    side.samples.setdefault(level.key, []).append(bucket)
    return bucket


def _save_side(side: _Side) -> None:
    assert side.run_dir is not None and side.info is not None
    levels = [
        summarise_level(
            key, [r for rep in reps for r in rep], side.observed.get(key),
            side.planned.get(key, 0) * len(reps),
        )
        for key, reps in sorted(side.samples.items())
    ]
    write_run_info(side.run_dir, side.info)
    write_summaries(side.run_dir, levels)


def _slot_record(slot: Slot, level: LevelSpec, bucket: list[RequestRecord]) -> SlotRecord:
    key = level.key
    ids = [r.request_id for r in bucket]
    summary = summarise_level(key, bucket, None, level.n_requests).stored() if bucket else None
    return SlotRecord(
        position=slot.position, target=slot.target, level=str(key), repeat=slot.repeat,
        first_id=min(ids) if ids else None, last_id=max(ids) if ids else None,
        n_records=len(bucket), summary=summary,
    )


async def run_comparison_async(
    config: CompareConfig, urls: dict[str, str], progress: ProgressSink | None = None,
) -> ComparisonOutcome:
    """Preflight every target, then run the interleaved slots; see the module's text."""
    progress = progress or NullProgress()
    base = config.workload
    check_output_dir(Path(base.out_dir))
    plan = base.load_spec()
    levels = plan.levels()
    pool = plan.max_in_flight()
    ensure_file_limit(pool * len(config.targets))
    sides = []
    for t in config.targets:
        cfg, secrets = split_url_credentials(
            _target_config(base, t, urls[t.name]), Secrets.from_env(base.client.api_key_env)
        )
        sides.append(_Side(t, cfg, secrets))
    by_name = {s.target.name: s for s in sides}
    async with contextlib.AsyncExitStack() as stack:
        found = [await _preflight(stack, side, pool) for side in sides]
        check_models({s.target.name: m for s, (m, _) in zip(sides, found, strict=True)},
                     config.allow_different_models)
        comp_dir = new_run_dir(Path(base.out_dir), "compare")
        for side, (model, server) in zip(sides, found, strict=True):
            _open_side(side, comp_dir, model, server)
        order = interleaved_order(list(by_name), len(levels), config.repeats, base.seed)
        total = len(sides) * base.warmup + config.repeats * sum(
            lv.n_requests for lv in levels) * len(sides)
        progress.started(total, str(comp_dir), found[0][0])
        stored = ComparisonFile.start(config, comp_dir, sides_info(sides), order, levels)
        try:
            await _warm_up(sides)
            for slot in order:
                side, level = by_name[slot.target], levels[slot.level_index]
                bucket = await _run_slot(side, level, progress)
                stored.slots.append(_slot_record(slot, level, bucket))
                _save_side(side)
                write_comparison(comp_dir, stored)
            stored.status = "complete"
        except asyncio.CancelledError:
            stored.status = "incomplete"
            raise
        finally:
            _finish(sides, stored, comp_dir, config)
    return ComparisonOutcome(comp_dir, stored)


async def _warm_up(sides: list[_Side]) -> None:
    for side in sides:
        if side.config.warmup:
            assert side.client is not None
            cfg = side.config
            source = builtin_source(cfg.input_tokens, cfg.output_tokens, cfg.seed)
            io = LevelIO(side.client, source, _sink(side, [], NullProgress()), side.ids)
            await run_level(warmup_level(cfg.warmup), io)


def _finish(
    sides: list[_Side], stored: ComparisonFile, comp_dir: Path, config: CompareConfig
) -> None:
    if stored.status == "running":  # stopped by an error: what finished is kept
        stored.status = "incomplete"
    for side in sides:
        if side.writer is not None:
            side.writer.close()
        if side.info is not None:
            side.info.status = "complete" if stored.status == "complete" else "incomplete"
            _save_side(side)
    if stored.status == "complete":
        stored.analyse({s.target.name: s.samples for s in sides}, config.slo)
    write_comparison(comp_dir, stored)


def sides_info(sides: list[_Side]) -> list[dict[str, Any]]:
    return [
        {"name": s.target.name, "target": s.target.describe(),
         "run_dir": s.run_dir.name if s.run_dir else None,
         "model": s.info.config.get("model") if s.info else None}
        for s in sides
    ]


def run_comparison(
    config: CompareConfig, progress: ProgressSink | None = None, time_scale: float = 1.0
) -> ComparisonOutcome:
    """Start the simulator targets, run the comparison, stop them (synchronous)."""
    with (
        _servers(config.targets, time_scale) as urls,
        asyncio.Runner(loop_factory=loop_factory()) as runner,
    ):
        return runner.run(run_comparison_async(config, urls, progress))


__all__ = ["CompareConfig", "ComparisonOutcome", "run_comparison"]
