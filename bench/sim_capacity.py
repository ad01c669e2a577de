"""How many concurrent streams the simulator sustains on one core with its schedule intact.

The simulator runs as a child process pinned to CPU 0 with a flat profile: every engine step
takes exactly ``--itl-ms`` (default 10 ms) whatever the batch, so each stream should get one
token every ``itl`` ms. A minimal aiohttp streaming client, pinned to CPU 1, runs
closed-loop streams at rising concurrency and measures, per level:

- ITL error: per request ``(last - first) / (N - 1) - itl`` (mean and p99 of |error|);
- chunk gap p99 minus itl (how bursty delivery is);
- the server's own engine-event lateness (from ``/metrics``: mean and max);
- TTFT (expected 10-20 ms: the rest of the running step, then one prefill step).

A level is sustained when the mean |ITL error| and the server's mean lateness are both
under 1 ms. Usage::

    python bench/sim_capacity.py [--levels 64,128,256,512,1024,2048] [--seconds 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

import aiohttp
import numpy as np

from servecap.sim.runner import start_server_process


async def one_stream(
    session: aiohttp.ClientSession, url: str, tokens: int, until: float, out: list[list[float]]
) -> None:
    body = {"prompt": "x" * 16, "max_tokens": tokens, "stream": True}
    while time.monotonic() < until:
        stamps: list[float] = [time.monotonic()]  # send time first
        async with session.post(url, json=body) as resp:
            async for data in resp.content.iter_any():
                now = time.monotonic()
                stamps.extend([now] * data.count(b'"text"'))
        out.append(stamps)


async def scrape(session: aiohttp.ClientSession, base: str) -> dict[str, float]:
    async with session.get(base.removesuffix("/v1") + "/metrics") as resp:
        text = await resp.text()
    values: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("sim:"):
            name, value = line.split("{", 1)[0], line.rsplit(" ", 1)[1]
            values[name] = float(value)
    return values


async def run_level(base: str, c: int, seconds: float, tokens: int, itl: float) -> dict[str, float]:
    url = f"{base}/completions"
    conn = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=None)
    async with aiohttp.ClientSession(connector=conn, timeout=timeout) as session:
        before = await scrape(session, base)
        out: list[list[float]] = []
        until = time.monotonic() + seconds
        await asyncio.gather(*[one_stream(session, url, tokens, until, out) for _ in range(c)])
        after = await scrape(session, base)
    full = [s for s in out if len(s) == tokens + 1]
    ttft = np.array([s[1] - s[0] for s in full])
    full = [s[1:] for s in full]
    itl_err = np.array([(s[-1] - s[0]) / (tokens - 1) - itl for s in full])
    gaps = np.concatenate([np.diff(s) for s in full]) if full else np.array([np.nan])
    events = after["sim:step_lateness_events_total"] - before["sim:step_lateness_events_total"]
    late = after["sim:step_lateness_seconds_total"] - before["sim:step_lateness_seconds_total"]
    return {
        "concurrency": c,
        "requests": len(full),
        "ttft_mean_ms": 1000 * float(np.mean(ttft)),
        "itl_err_mean_ms": 1000 * float(np.mean(np.abs(itl_err))),
        "itl_err_p99_ms": 1000 * float(np.percentile(np.abs(itl_err), 99)),
        "gap_p99_minus_itl_ms": 1000 * (float(np.percentile(gaps, 99)) - itl),
        "server_late_mean_ms": 1000 * late / max(events, 1),
        "server_late_max_ms": 1000 * after["sim:step_lateness_seconds_max"],
        "chunks_per_s": sum(len(s) - 1 for s in out) / seconds,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--levels", default="64,128,256,512,1024,2048")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--itl-ms", type=float, default=10.0)
    ap.add_argument("--tokens", type=int, default=100)
    args = ap.parse_args()
    itl = args.itl_ms / 1000.0
    prof = {"name": "flat", "params": {"step_base_ms": args.itl_ms, "idle_window_ms": 0.0}}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "flat.json"
        path.write_text(json.dumps(prof))
        with start_server_process(str(path)) as server:
            if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) >= 2:
                os.sched_setaffinity(server.proc.pid, {0})
                os.sched_setaffinity(0, {1})
            asyncio.run(run_level(server.base_url, 8, 1.0, args.tokens, itl))  # warm-up
            best = 0
            for c in [int(x) for x in args.levels.split(",")]:
                row = asyncio.run(run_level(server.base_url, c, args.seconds, args.tokens, itl))
                ok = row["itl_err_mean_ms"] < 1.0 and row["server_late_mean_ms"] < 1.0
                best = c if ok else best
                print(json.dumps({**row, "sustained": ok}), flush=True)
    print(f"largest sustained concurrency at {args.itl_ms:g} ms ITL: {best}")


if __name__ == "__main__":
    main()
