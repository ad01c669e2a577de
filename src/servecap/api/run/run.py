"""`run_benchmark`: a sweep over the load plan's levels, saved as it goes.

Order of work: validate and preflight (no load yet), create the run directory, warm up,
then each level of the plan (`RunConfig.load_spec()`) in turn, through its kind's scheduler
with the per-level observers around it; after every level the summaries on disk are
rewritten, so a run that stops early (even killed) keeps every level it finished and every
request it recorded.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from servecap import __version__
from servecap.api.run.find_cmax import CmaxPlan
from servecap.api.run.observers import RunContext, level_observers
from servecap.api.run.outage import OutageWatch
from servecap.api.run.plans import LevelPlan, StaticPlan, Step, StopRule
from servecap.api.run.power_metrics import Closers, start_power_scraper
from servecap.api.run.prefix_cache import prefix_setup
from servecap.api.run.preflight import check_output_dir, ensure_file_limit, preflight
from servecap.api.run.progress import NullProgress, ProgressSink
from servecap.api.run.run_config import RunConfig
from servecap.api.run.run_workers import worker_pool
from servecap.api.run.server_metrics import start_scraper
from servecap.api.run.workload import build_source, client_extra_body
from servecap.client.http import StreamingClient, make_session
from servecap.client.server_info import version_facts
from servecap.core.clock import ClockAnchor
from servecap.core.errors import RunAborted
from servecap.core.level_key import stored_name
from servecap.core.records import RequestRecord
from servecap.core.run_info import RunInfo
from servecap.core.secrets import Secrets, split_url_credentials
from servecap.core.summary import LevelSummary
from servecap.kinds.closed import warmup_level
from servecap.kinds.io import Backend, LevelIO
from servecap.kinds.registry import kind_named
from servecap.load.event_loop import loop_factory
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
from servecap.storage.safe_files import DiskReserve, hold_reserve


@dataclass
class RunOutcome:
    run_dir: Path
    info: RunInfo
    levels: list[LevelSummary]


class _Run:
    """State of one benchmark while it runs."""

    def __init__(
        self, config: RunConfig, progress: ProgressSink, secrets: Secrets,
        plan: LevelPlan | None = None,
    ) -> None:
        self.config = config
        self.plan: LevelPlan = plan or StaticPlan(config.load_spec())
        self.secrets = secrets
        self.progress = progress
        self.levels: list[LevelSummary] = []
        self.health: dict[str, dict[str, Any]] = {}
        self.ids = itertools.count()
        self.source = build_source(config)  # reads datasets/traces: bad input fails here
        self.run_level: Any = run_level  # or a worker pool's (`--workers`, `--ray`)
        self.pool: Any = None
        self.context = RunContext()
        self.outage: OutageWatch | None = None

    def sink_for(
        self, writer: RecordWriter, bucket: list[RequestRecord], until: _Until | None = None
    ) -> Any:
        def sink(record: RequestRecord) -> None:
            record.detail = self.secrets.redact(record.detail)  # servers echo credentials
            writer.write(record)
            bucket.append(record)
            self.progress.request_done(record)
            if self.outage is not None:
                self.outage.observe(record)
            if until is not None:
                until.see(record)

        return sink

    def io(
        self, backend: Backend, writer: RecordWriter, bucket: list[RequestRecord],
        stop: asyncio.Event | None, until: _Until | None = None,
    ) -> LevelIO:
        return LevelIO(backend, self.source, self.sink_for(writer, bucket, until), self.ids, stop)


@dataclass
class _Until:
    """A step's stop rule at work: it sets the level's own stop event once decided."""

    rule: StopRule
    stop: asyncio.Event
    decided: bool = False

    def see(self, record: RequestRecord) -> None:
        if self.rule.seen(record) and not self.decided:
            self.decided = True
            self.stop.set()


@asynccontextmanager
async def _level_stop(run_stop: asyncio.Event | None) -> AsyncIterator[asyncio.Event]:
    """A stop event for one level: set by its rule, or by the run's own stop."""
    event = asyncio.Event()
    relay = asyncio.ensure_future(_relay(run_stop, event)) if run_stop is not None else None
    try:
        yield event
    finally:
        if relay is not None:
            relay.cancel()


async def _relay(source: asyncio.Event, target: asyncio.Event) -> None:
    await source.wait()
    target.set()


async def run_benchmark_async(
    config: RunConfig,
    secrets: Secrets | None = None,
    progress: ProgressSink | None = None,
    stop: asyncio.Event | None = None,
    plan: LevelPlan | None = None,
) -> RunOutcome:
    """Preflight, sweep every level, and save. Cancelling the task ends it incomplete.

    `plan` replaces `config.load_spec()` for a caller that decides each level from the ones
    before it (`servecap verify --search`); `config.load` still says what the run is."""
    secrets = secrets or Secrets.from_env(config.client.api_key_env)
    bare, secrets = split_url_credentials(config.client, secrets)
    config = config.model_copy(update={"client": bare})
    progress = progress or NullProgress()
    if plan is None and config.find_cmax is not None:  # the grid, then C_max bisected
        plan = CmaxPlan.for_config(config)
    state = _Run(config, progress, secrets, plan)
    stop = stop or asyncio.Event()  # the caller's (the app's Stop), else the run's own
    state.outage = OutageWatch(config.outage_s, stop)
    out_dir = Path(config.out_dir)
    pool = state.plan.max_in_flight()
    ensure_file_limit(pool)
    async with make_session(config.client, pool, secrets.http_headers()) as session:
        model, server = await preflight(session, config, secrets)
        # after the server answered: a server that cannot be reached leaves no folder behind
        check_output_dir(out_dir)
        info = new_run_info(config, secrets.redact(model) or model, server)
        run_dir = new_run_dir(out_dir, info.name)
        write_run_info(run_dir, info)
        client = StreamingClient(
            session, config.client, model, config.endpoint, config.output_tokens,
            client_extra_body(config),
        )
        writer = RecordWriter(run_dir / REQUESTS_FILE)
        reserve = hold_reserve(run_dir)
        scraper, info.server_metrics = await start_scraper(
            config.server_metrics, config.metrics_hz, config.client, secrets, run_dir,
        )
        prefix = prefix_setup(config, server, secrets.http_headers())
        info.prefix_cache = prefix.describe() if prefix is not None else {}
        power, info.power_metrics = await start_power_scraper(
            config.power_metrics, config.metrics_hz, config.client, secrets, run_dir,
        )
        state.context = RunContext(scraper, prefix=prefix, power=power)
        total = config.warmup + state.plan.expected_requests()
        state.progress.started(total, str(run_dir), model)
        failure: OSError | None = None
        try:
            async with worker_pool(config, model, secrets.http_headers(), state.plan) as workers:
                state.pool = workers
                state.run_level = workers.run_level if workers else run_level
                await _sweep(state, client, writer, stop, lambda: _save(run_dir, info, state))
            info.status = "incomplete" if stop.is_set() else "complete"
            if state.outage.declared:
                info.stop_reason = state.outage.reason()
        except asyncio.CancelledError:
            info.status, info.stop_reason = "incomplete", "interrupted"
            raise
        except OSError as exc:
            failure = exc
        finally:
            closing = _Closing(Closers(scraper, power), writer, reserve)
            failure = await _wind_up(run_dir, info, state, closing, failure)
    outcome = RunOutcome(run_dir=run_dir, info=info, levels=state.levels)
    if failure is None:  # BR partials beside the run's own files; a failure is a note
        write_partials_or_note(Run(path=run_dir, info=info, levels=state.levels))
    if failure is not None:
        raise _write_failed(run_dir, failure, outcome) from None
    if state.outage.declared:  # kept what it measured; exits non-zero all the same
        raise RunAborted(f"run stopped: {info.stop_reason}; what was measured is kept in "
                         f"{run_dir}", outcome)
    return outcome


@dataclass
class _Closing:
    """What a run closes at its end, whatever ended it."""

    scraper: Any
    writer: RecordWriter
    reserve: DiskReserve | None


async def _wind_up(
    run_dir: Path, info: RunInfo, state: _Run, closing: _Closing, failure: OSError | None
) -> OSError | None:
    """Close the scraper and the writer, free the reserve and save run.json and the
    summaries, each step whatever the one before did (a full disk fails them all, and the
    first failure must not hide the save). Returns the first write failure, if any."""
    errors = [failure]
    if closing.scraper is not None:
        try:
            await asyncio.shield(closing.scraper.close())
        except OSError as exc:
            errors.append(exc)
    if closing.reserve is not None:
        closing.reserve.release()  # the room the writer's rest and the save need
    try:
        closing.writer.close()
    except OSError as exc:
        errors.append(exc)
    first = next((e for e in errors if e is not None), None)
    if first is not None:
        info.status, info.stop_reason = "incomplete", f"write failed: {first.strerror or first}"
    try:
        _save(run_dir, info, state)
    except OSError as exc:
        first = first or exc
    return first


def _write_failed(run_dir: Path, exc: OSError, outcome: RunOutcome) -> RunAborted:
    """A clear message for a full disk or a vanished output dir; what was written stays,
    and the outcome so far travels with the error (the front end shows its levels)."""
    return RunAborted(
        f"run stopped: cannot write results in {run_dir} ({exc.strerror or exc}); "
        "the requests recorded so far are kept",
        outcome,
    )


async def _sweep(
    state: _Run,
    client: StreamingClient,
    writer: RecordWriter,
    stop: asyncio.Event | None,
    save: Callable[[], None],
) -> None:
    """Warm up, then each step of the plan, handing it the last level's summary; `save`
    after each finished level."""
    if state.config.warmup:
        await state.run_level(
            warmup_level(state.config.warmup), state.io(client, writer, [], stop)
        )
    steps = state.plan.steps()
    summary: LevelSummary | None = None
    while not (stop is not None and stop.is_set()):
        try:
            step = steps.send(summary)
        except StopIteration:
            return
        summary = await _run_step(state, step, client, writer, stop)
        save()


async def _run_step(
    state: _Run, step: Step, client: StreamingClient, writer: RecordWriter,
    stop: asyncio.Event | None,
) -> LevelSummary | None:
    """One level inside its observers; its summary, or None when it recorded nothing."""
    level = step.level
    state.progress.level_started(level.key, level.n_requests)
    bucket: list[RequestRecord] = []
    observed: dict[str, Any] = {}
    until: _Until | None = None
    async with _level_stop(stop) as level_stop:
        if step.until is not None:
            until = _Until(step.until, level_stop)
        try:
            await state.run_level(
                level, state.io(client, writer, bucket, level_stop if until else stop, until),
                level_observers(level, state.context), observed,
            )
        finally:
            summary = _close_level(state, step, bucket, observed, until)
    return summary


def _close_level(
    state: _Run, step: Step, bucket: list[RequestRecord], observed: dict[str, Any],
    until: _Until | None,
) -> LevelSummary | None:
    if not bucket:
        return None
    level = step.level
    # a level its rule ended sent what it was meant to; its rule names its window
    planned = len(bucket) if until is not None and until.decided else level.planned_requests()
    window = step.until.window() if step.until is not None else None
    summary = summarise_level(level.key, bucket, observed, planned, window or level.window())
    state.levels.append(summary)
    if observed:
        # run.json keeps what the observers saw, so a summary recomputed from
        # requests.jsonl still has it ("64" for c=64, as before keys existed).
        name = stored_name(level.key)
        state.health[name] = observed
    state.progress.level_done(summary)
    return summary


def _save(run_dir: Path, info: RunInfo, state: _Run) -> None:
    """run.json first: once a level's summary is on disk, so is what its observers saw."""
    info.client_health = state.health
    if state.pool is not None:
        info.workers = state.pool.facts()
    write_run_info(run_dir, info)
    write_summaries(run_dir, state.levels)


def new_run_info(config: RunConfig, model: str, server: dict[str, Any]) -> RunInfo:
    """A new run's `run.json`, status running (also a comparison's per-target runs)."""
    anchor = ClockAnchor.take()
    facts = version_facts(server.get("version"))
    stored = config.stored()
    stored["model"] = model
    return RunInfo(
        name=config.name or model,
        status="running",
        tool_version=__version__,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        anchor_wall_ns=anchor.wall_ns,
        anchor_perf_ns=anchor.perf_ns,
        config=stored,
        server=server,
        deployment=facts.deployment,
        time_scale=facts.time_scale,
        notes=facts.notes,
        # its kind sends when a stream frees up, not at target times
        closed_loop=not kind_named(config.load_spec().kind).scheduled(),
        pid=os.getpid(),  # lets a reader tell a killed run from one still going
        host=socket.gethostname(),
        cost=config.cost.given() if config.cost is not None else {},
    )


def run_benchmark(
    config: RunConfig, secrets: Secrets | None = None, progress: ProgressSink | None = None,
    plan: LevelPlan | None = None,
) -> RunOutcome:
    """Synchronous wrapper: runs the sweep on uvloop where available."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner:
        return runner.run(run_benchmark_async(config, secrets, progress, plan=plan))


__all__ = ["RunOutcome", "Secrets", "run_benchmark", "run_benchmark_async"]
