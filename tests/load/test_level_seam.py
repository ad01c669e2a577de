"""The load seam against a real server: a request source's own max_tokens reach the wire, the
fixed scheduler sends at its target times, and observers wrap the level they watch."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from servecap.client.http import StreamingClient, make_session
from servecap.core.config import ClientOptions
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.kinds.closed import ClosedLoad
from servecap.kinds.fixed import FixedLoad
from servecap.kinds.io import LevelIO
from servecap.kinds.registry import KINDS
from servecap.load.sweep import run_level
from servecap.workload.source import Request
from tests.servers.schedule_server import Schedule, ServerThread, make_app


class Lengths:
    """A request source whose requests each ask for their own number of tokens."""

    def __init__(self, max_tokens: list[int]) -> None:
        self._next = itertools.cycle(max_tokens)

    def next_request(self) -> Request:
        return Request("Say something.", next(self._next), 4)


class Spy:
    """An observer that notes when it was entered and left, and adds one field."""

    def __init__(self, events: list[str]) -> None:
        self.events = events

    async def __aenter__(self) -> Spy:
        self.events.append("enter")
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.events.append("exit")

    def fields(self) -> dict[str, Any]:
        return {"client_cpu_pct": 12.5}


async def _level(base_url: str, level: Any, source: Any, observers: list[Any]) -> tuple[
    list[RequestRecord], dict[str, Any]
]:
    options = ClientOptions(base_url=base_url)
    out: list[RequestRecord] = []
    observed: dict[str, Any] = {}
    async with make_session(options, 4, {}) as session:
        # The client's own max_tokens (99) is only the default: each request's wins.
        client = StreamingClient(session, options, "test-model", "chat", 99)
        io = LevelIO(client, source, out.append, itertools.count())
        await run_level(level, io, observers, observed)
    return out, observed


def test_each_request_carries_its_own_max_tokens() -> None:
    level = ClosedLoad(concurrency=[2], rounds=3).levels()[0]
    with ServerThread(make_app(Schedule(ttft_s=0.005, chunk_interval_s=0.001))) as server:
        rows, _ = asyncio.run(_level(server.base_url, level, Lengths([3, 5, 7]), []))
    assert len(rows) == 6 and all(r.ok for r in rows)
    assert sorted(r.completion_tokens or 0 for r in rows) == [3, 3, 5, 5, 7, 7]
    assert {r.key for r in rows} == {LevelKey.closed(2)} and {r.concurrency for r in rows} == {2}


def test_observers_wrap_the_level_and_add_their_fields() -> None:
    events: list[str] = []
    level = ClosedLoad(concurrency=[1], rounds=2).levels()[0]

    class Source(Lengths):
        def next_request(self) -> Request:
            events.append("request")
            return super().next_request()

    with ServerThread(make_app(Schedule(ttft_s=0.005, chunk_interval_s=0.001))) as server:
        _, observed = asyncio.run(_level(server.base_url, level, Source([2]), [Spy(events)]))
    assert events == ["enter", "request", "request", "exit"]
    assert observed == {"client_cpu_pct": 12.5}


def test_fixed_schedule_sends_at_its_target_times() -> None:
    offsets = [0.0, 0.03, 0.06, 0.12]
    level = FixedLoad(schedules=[offsets]).levels()[0]
    with ServerThread(make_app(Schedule(ttft_s=0.005, chunk_interval_s=0.001))) as server:
        rows, _ = asyncio.run(_level(server.base_url, level, Lengths([2]), []))
    rows.sort(key=lambda r: r.stream_index)
    assert [r.stream_index for r in rows] == [0, 1, 2, 3] and all(r.ok for r in rows)
    t0 = rows[0].scheduled_at
    # scheduled_at is the absolute target, exactly, whatever the wake-up jitter
    assert [r.scheduled_at - t0 for r in rows] == [round(s * 1e9) for s in offsets]
    assert all(r.sent_at is not None and r.sent_at >= r.scheduled_at for r in rows)
    assert {r.key for r in rows} == {LevelKey("fixed", 1)} and "fixed" in KINDS
