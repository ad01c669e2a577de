"""One level of a sweep: its scheduler, with the per-level observers around it.

An observer is an async context manager the sweep enters before a level's first request and
leaves after its last (today the client monitor; the server-metrics scraper and worker
health are next). Each adds its fields to the level's summary row through `fields()`, so
the sweep and `api.run.run` never know which observers there are.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import Any, Protocol

from servecap.kinds.base import LevelSpec
from servecap.kinds.io import LevelIO


class LevelObserver(Protocol):
    """Watches one level; `fields()` (summary columns) is read after it exited."""

    async def __aenter__(self) -> Any: ...

    async def __aexit__(self, *exc_info: Any) -> Any: ...

    def fields(self) -> dict[str, Any]: ...



async def run_level(
    level: LevelSpec,
    io: LevelIO,
    observers: Sequence[LevelObserver] = (),
    observed: dict[str, Any] | None = None,
) -> None:
    """Run `level` (its kind's own scheduler, `LevelSpec.run`) inside every observer.

    The observers' fields land in `observed` even when the level is cut short (stop,
    cancel, a failing sink), so whatever was recorded still gets its row.
    """
    try:
        async with AsyncExitStack() as stack:
            for observer in observers:
                await stack.enter_async_context(observer)
            await level.run(io)
    finally:
        if observed is not None:
            for observer in observers:
                observed.update(observer.fields())
