"""The open-loop scheduler against a real server on 127.0.0.1: requests go out at their
arrival targets (scheduled_at exact, from workload.arrivals), arrivals do not wait for
earlier requests, and a full max-concurrency cap's wait is recorded, not hidden."""

from __future__ import annotations

import asyncio
import itertools

import pytest

from servecap.client.http import StreamingClient, make_session
from servecap.core.config import ClientOptions
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.kinds.io import LevelIO
from servecap.kinds.open_loop import OpenLevel, OpenLoad, level_offsets_ns
from servecap.kinds.registry import KINDS
from servecap.load.sweep import run_level
from servecap.workload.arrivals import ArrivalProcess
from servecap.workload.source import builtin_source
from tests.servers.schedule_server import Schedule, ServerThread, make_app


async def _run(base_url: str, level: OpenLevel) -> list[RequestRecord]:
    options = ClientOptions(base_url=base_url)
    out: list[RequestRecord] = []
    async with make_session(options, level.max_concurrency, {}) as session:
        client = StreamingClient(session, options, "test-model", "chat", 4)
        io = LevelIO(client, builtin_source(16, 4), out.append, itertools.count())
        await run_level(level, io)
    return sorted(out, key=lambda r: r.stream_index)


@pytest.mark.slow
def test_targets_are_the_arrival_schedule_exactly() -> None:
    level = OpenLoad(rates=[40.0], requests=24, seed=7, warmup_s=0, cooldown_s=0).levels()[0]
    planned = ArrivalProcess("poisson", 40.0).offsets(seed=7, count=24)
    assert list(level_offsets_ns(level)) == [round(float(t) * 1e9) for t in planned]
    # Each request takes ~0.1 s, several times the mean gap: a closed loop could not
    # keep this schedule, an open loop must.
    slow = Schedule(ttft_s=0.05, chunk_interval_s=0.02)
    with ServerThread(make_app(slow)) as server:
        rows = asyncio.run(_run(server.base_url, level))
    assert len(rows) == 24 and all(r.ok for r in rows) and "open" in KINDS
    assert {r.key for r in rows} == {LevelKey("rate", 40.0, "/s")}
    assert {r.level for r in rows} == {"rate=40/s"}
    # scheduled_at is t0 + the planned offset, to the nanosecond, whatever the wake-ups
    t0 = rows[0].scheduled_at - level_offsets_ns(level)[0]
    assert [r.scheduled_at - t0 for r in rows] == list(level_offsets_ns(level))
    assert all(r.sent_at is not None and r.sent_at >= r.scheduled_at for r in rows)
    assert all(r.admitted_at is None for r in rows)  # the cap (1024) never filled
    # open loop: requests overlapped (a later one was sent before an earlier one ended)
    assert any(b.sent_at < a.ended_at for a, b in itertools.pairwise(rows))  # type: ignore[operator]


@pytest.mark.slow
def test_a_full_cap_waits_and_the_wait_is_recorded() -> None:
    level = OpenLoad(
        rates=[100.0], arrival="constant", requests=6, max_concurrency=1,
        warmup_s=0, cooldown_s=0,
    ).levels()[0]
    slow = Schedule(ttft_s=0.05, chunk_interval_s=0.01)
    with ServerThread(make_app(slow)) as server:
        rows = asyncio.run(_run(server.base_url, level))
    assert len(rows) == 6 and all(r.ok for r in rows)
    # one in flight at a time: each request waits for the one before it to end
    for before, after in itertools.pairwise(rows):
        assert after.sent_at is not None and before.ended_at is not None
        assert after.sent_at >= before.ended_at
    waited = [r for r in rows if r.admitted_at is not None]
    assert len(waited) == 5 and rows[0].admitted_at is None
    # the wait sits between the target and the send, so lateness shows it
    for r in waited:
        assert r.admitted_at is not None and r.sent_at is not None
        assert r.scheduled_at < r.admitted_at <= r.sent_at
    assert "admitted_at" in waited[0].to_dict() and "admitted_at" not in rows[0].to_dict()
