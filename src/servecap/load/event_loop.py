"""The event loop servecap runs its load on: uvloop where available (the client's timing is
measured on it), asyncio's own otherwise."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """For `asyncio.Runner(loop_factory=...)`: uvloop's loop, or None for asyncio's default."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency on POSIX
        return None
    return uvloop.new_event_loop
