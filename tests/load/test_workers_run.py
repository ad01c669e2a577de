"""`--workers`: a level split over worker processes against real servers on 127.0.0.1.

The same schedule run by one process and by two gives the same summaries (counts exactly,
timings within what the deterministic simulator's own schedule allows on a loaded
machine), every target time is the one schedule's, and a worker killed mid-level, or a
Ctrl-C to the whole process group, loses no row of a request that reached the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path

import pytest
from aiohttp import web

from servecap.api.run.progress import NullProgress
from servecap.api.run.run import Secrets, run_benchmark, run_benchmark_async
from servecap.api.run.run_config import RunConfig
from servecap.core.config import ClientOptions
from servecap.kinds.open_loop import OpenLoad, level_offsets_ns
from servecap.sim import start_server_process
from servecap.storage.runs import load_run
from tests.interrupt.proc import load_rows, requests_file, start_run, wait_for_rows
from tests.servers.app_thread import AppThread

OPEN = OpenLoad(rates=[25.0], requests=50, arrival="poisson", warmup_s=0, cooldown_s=0, seed=3)
#: the clocks' rounding: a token is never earlier than its schedule by more than this
CLOCK_MS = 1.0


def config(base_url: str, out: Path, workers: int, **kw: object) -> RunConfig:
    fields: dict[str, object] = {"warmup": 1, **kw}
    return RunConfig(
        name=f"w{workers}", output_tokens=16, input_tokens=32, out_dir=str(out),
        client=ClientOptions(base_url=base_url), server_metrics="off", workers=workers,
        **fields,
    )


def counting_app(seen: list[int], tokens: int = 20, gap_s: float = 0.05) -> web.Application:
    """Streams `tokens` chunks `gap_s` apart and counts every request it received."""

    async def models(_: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "m"}]})

    async def chat(request: web.Request) -> web.StreamResponse:
        await request.read()
        seen.append(1)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for _ in range(tokens):
            await asyncio.sleep(gap_s)  # pace: the fake server's token gap
            delta = {"choices": [{"index": 0, "delta": {"content": "x"}}]}
            await response.write(b"data: " + json.dumps(delta).encode() + b"\n\n")
        usage = {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": tokens}}
        await response.write(b"data: " + json.dumps(usage).encode() + b"\n\ndata: [DONE]\n\n")
        return response

    app = web.Application()
    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/chat/completions", chat)
    return app


def worker_pids() -> list[int]:
    """This process's worker children (from /proc: no extra dependency)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"servecap.load.worker_proc" in cmdline:
            pids.append(int(entry))
    return pids


@pytest.mark.slow
def test_two_workers_give_one_process_summaries_on_the_same_schedule(tmp_path):
    with start_server_process("deterministic") as sim:
        runs = {w: run_benchmark(config(sim.base_url, tmp_path / str(w), w, load=OPEN))
                for w in (1, 2)}
        closed = run_benchmark(config(sim.base_url, tmp_path / "c", 2, concurrency=[1, 6],
                                      rounds=2))
    one, two = runs[1].levels[0], runs[2].levels[0]
    assert one.workers is None and two.workers == 2
    assert (two.n_requests, two.n_ok, two.n_failed) == (one.n_requests, one.n_ok, 0) == (50, 50, 0)
    assert two.completion_tokens_mean == one.completion_tokens_mean == 16
    assert len(two.worker_health) == 2 and sum(w["requests"] for w in two.worker_health) == 50
    # one schedule: each row's target, from the shared start, is the planned offset exactly
    offsets = level_offsets_ns(OPEN.levels()[0])
    rows = [r for r in load_rows(runs[2].run_dir / "requests.jsonl") if not r["warmup"]]
    start = min(r["scheduled_at"] - offsets[r["stream_index"]] for r in rows)
    assert sorted(r["scheduled_at"] - start for r in rows) == sorted(offsets)
    assert {r["stream_index"] for r in rows} == set(range(50))
    # timings: the simulator's fixed 50 ms TTFT and 10 ms ITL are a floor for both (a busy
    # machine only adds to them; how close two workers come to one is bench/'s to say)
    for lv in (one, two):
        assert lv.ttft_mean_ms >= 50.0 - CLOCK_MS
        assert lv.latency_mean_s >= (50.0 + 15 * 10.0 - CLOCK_MS) / 1000
    clock = runs[2].info.workers["clock"]
    assert len(clock) == 2 and all(c["one_clock"] for c in clock)
    assert runs[2].info.workers["one_clock"] is True
    assert [lv.n_ok for lv in closed.levels] == [2, 12]
    assert [lv.workers for lv in closed.levels] == [1, 2]  # c=1 has one stream to give out
    stored = json.loads((closed.run_dir / "summary.json").read_text())
    assert stored[1]["workers"] == 2 and len(stored[1]["worker_health"]) == 2
    assert "workers" not in json.loads((runs[1].run_dir / "summary.json").read_text())[0]
    assert load_run(closed.run_dir).levels[1].workers == 2  # the stored run reads back


@pytest.mark.slow
def test_a_killed_worker_loses_no_row_and_is_named(tmp_path):
    seen: list[int] = []

    class KillOne(NullProgress):
        killed: int | None = None
        done = 0

        def request_done(self, record):
            self.done += 1
            if self.done == 3 and self.killed is None:  # mid-level: 2 of 12 ended
                self.killed = sorted(worker_pids())[-1]
                os.kill(self.killed, signal.SIGKILL)

    progress = KillOne()
    with AppThread(counting_app(seen)) as server:
        cfg = config(server.base_url, tmp_path, 2, concurrency=[4], rounds=3, warmup=0)
        outcome = asyncio.run(run_benchmark_async(cfg, Secrets(), progress))
    rows = load_rows(requests_file(tmp_path))
    died = [r for r in rows if r.get("reason") == "worker_died"]
    ok = [r for r in rows if r["status"] == "ok"]
    assert progress.killed is not None
    assert died and all(r["status"] == "cancelled" for r in died)
    assert len(rows) == len(ok) + len(died)
    # every request the server received has its row (a row marked worker_died may be one
    # the dead worker had started and not yet written)
    assert len(ok) <= len(seen) <= len(rows)
    assert len({r["request_id"] for r in rows}) == len(rows)
    deaths = outcome.info.workers["died"]
    pids = {c["worker"]: c["pid"] for c in outcome.info.workers["clock"]}
    assert [d["worker"] for d in deaths] == [w for w, p in pids.items() if p == progress.killed]
    assert "signal 9" in deaths[0]["why"]
    level = outcome.levels[0]
    assert level.partial and level.workers_died == [deaths[0]["worker"]]
    assert any(f"worker {deaths[0]['worker']}" in w for w in level.warnings)
    survivor = next(w for w in level.worker_health if "died" not in w)
    assert survivor["requests"] == 6  # its whole share: 2 streams x 3 rounds


@pytest.mark.slow
def test_ctrl_c_to_the_process_group_keeps_every_row(tmp_path):
    seen: list[int] = []
    with AppThread(counting_app(seen, tokens=10, gap_s=0.05)) as server:
        proc = start_run(server.base_url, tmp_path, "--workers", "2", preexec=os.setsid)
        wait_for_rows(tmp_path, 10, proc, limit_s=90)
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err[-2000:]
    rows = load_rows(requests_file(tmp_path))
    cancelled = [r for r in rows if r["status"] == "cancelled"]
    assert cancelled and all(r["reason"] == "cancelled" for r in cancelled)
    assert len(seen) <= len(rows)  # nothing the server saw is missing
    assert len(rows) - len(cancelled) >= 10
    info = json.loads(next(tmp_path.glob("*/run.json")).read_text())
    assert info["status"] == "incomplete" and info["workers"]["count"] == 2
