"""`--workers` and `--ray` for a run: how many worker processes, and what each one sends with.

The factory is what a worker builds inside its own process: the same client and request
source `api.run.run` builds in one process (the same config, model, endpoint, extra body and
headers), so a level run by workers sends what one process would. It travels to the
worker process (pickled by multiprocessing or Ray, between servecap's own processes);
header values, the API key among them, live only in the workers' memory, never on disk.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from servecap.api.run.plans import LevelPlan
from servecap.api.run.preflight import ensure_file_limit
from servecap.api.run.run_config import RunConfig
from servecap.api.run.workload import build_source, client_extra_body
from servecap.client.http import StreamingClient, make_session
from servecap.core.errors import bad_setting
from servecap.kinds.io import Backend
from servecap.load.shares import STREAMS_PER_WORKER, auto_workers
from servecap.load.workers import ProcessPool, WorkerSweep, usable_cores
from servecap.workload.source import RequestSource


@dataclass(frozen=True)
class ClientFactory:
    """Builds a worker's client and source from the run's config (a picklable value)."""

    config_json: str
    model: str
    pool: int
    headers: tuple[tuple[str, str], ...]

    @asynccontextmanager
    async def __call__(
        self, worker: int = 0, workers: int = 1
    ) -> AsyncIterator[tuple[Backend, RequestSource]]:
        config = RunConfig.model_validate_json(self.config_json)
        ensure_file_limit(self.pool)
        source = config.load_spec().worker_source(build_source(config), worker, workers)
        async with make_session(config.client, self.pool, dict(self.headers)) as session:
            yield StreamingClient(
                session, config.client, self.model, config.endpoint, config.output_tokens,
                client_extra_body(config),
            ), source


def pool_size(config: RunConfig, plan: LevelPlan, cores: int) -> int:
    """Worker processes to start: `--workers N`, or for auto the most any level needs.

    `--workers N` is capped at the most streams a level may hold (`--workers 1000` for a
    one-stream level started hundreds of idle processes); the run's worker facts say how
    many ran."""
    levels = plan.known_levels()
    if config.workers is not None:
        most = plan.max_in_flight() if levels is None else max(
            (level.demand() for level in levels), default=1)
        return max(1, min(config.workers, most))
    if levels is None:
        # an adaptive plan decides its levels as it runs (verify --search): size the pool
        # by its bound on streams
        return max(1, min(cores, math.ceil(plan.max_in_flight() / STREAMS_PER_WORKER)))
    return max((auto_workers(level, cores) for level in levels), default=1)


@asynccontextmanager
async def worker_pool(
    config: RunConfig, model: str, headers: dict[str, str], plan: LevelPlan
) -> AsyncIterator[WorkerSweep | None]:
    """The run's workers, or None where the run stays in this process (one worker)."""
    factory = ClientFactory(
        config.model_dump_json(), model, plan.max_in_flight(), tuple(sorted(headers.items()))
    )
    if config.ray_address is not None:
        from servecap.load.ray_cluster import RayPool  # ray is an extra: imported here only

        async with RayPool(factory, config.ray_address, config.workers) as ray_pool:
            yield ray_pool
        return
    size = pool_size(config, plan, usable_cores())
    if size <= 1:
        yield None
        return
    async with ProcessPool(factory, size, config.workers) as pool:
        yield pool


def parse_workers(text: str, name: str = "workers") -> int | None:
    """Worker processes: a whole number from 1 to 1024, or `auto` (None); `name` is the
    setting named in messages."""
    value = text.strip().lower()
    if value == "auto":
        return None
    if not value.isdigit() or not 1 <= int(value) <= 1024:
        raise bad_setting(name, f"{text!r}: use auto or a number from 1 to 1024", "invalid ")
    return int(value)
