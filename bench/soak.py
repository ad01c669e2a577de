"""Soak: servecap's client against the simulator for a long, bounded period.

Not a test: prints figures. Runs a closed loop at c streams (default 256) for --minutes
(default 30) against `servecap.sim` in its own process, and every --every seconds prints
requests done, requests/s, RSS, open file descriptors and event-loop lag (p99 and max
over the interval). All must stay flat: a leak shows as RSS or fds that keep growing.

  python bench/soak.py                          # 30 min at c=256
  python bench/soak.py --minutes 3 --concurrency 256
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import signal
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import uvloop

from servecap.client.http import StreamingClient, make_session
from servecap.core.config import ClientOptions
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.kinds.closed import ClosedLevel
from servecap.kinds.io import LevelIO
from servecap.sim import start_server_process
from servecap.storage.run_dir import RecordWriter
from servecap.workload.source import builtin_source

TICK_S = 0.02
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * PAGE / 2**20


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@dataclass
class Tally:
    ok: int = 0
    failed: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    lags_ms: list[float] = field(default_factory=list)

    def sink(self, writer: RecordWriter | None) -> object:
        def on_record(record: RequestRecord) -> None:
            if record.ok:
                self.ok += 1
            else:
                self.failed += 1
                key = record.reason or "?"
                self.reasons[key] = self.reasons.get(key, 0) + 1
            if writer is not None:
                writer.write(record)

        return on_record


async def watch_lag(tally: Tally) -> None:
    loop = asyncio.get_running_loop()
    while True:
        due = loop.time() + TICK_S
        await asyncio.sleep(TICK_S)
        tally.lags_ms.append(max(0.0, loop.time() - due) * 1000)


async def report(tally: Tally, every_s: float, t0: float, rows: list[tuple[float, ...]]) -> None:
    print(f"{'t_s':>6} {'done':>8} {'rps':>7} {'failed':>6} {'rss_MiB':>8} {'fds':>5} "
          f"{'lag_p99_ms':>10} {'lag_max_ms':>10}", flush=True)
    last_done, last_t = 0, t0
    while True:
        await asyncio.sleep(every_s)
        now = time.perf_counter()
        done = tally.ok + tally.failed
        lags, tally.lags_ms = tally.lags_ms, []
        p99 = statistics.quantiles(lags, n=100)[98] if len(lags) >= 2 else 0.0
        row = (now - t0, done, (done - last_done) / (now - last_t), tally.failed,
               rss_mib(), open_fds(), p99, max(lags, default=0.0))
        rows.append(row)
        print(f"{row[0]:6.0f} {row[1]:8d} {row[2]:7.1f} {row[3]:6d} {row[4]:8.1f} "
              f"{row[5]:5d} {row[6]:10.2f} {row[7]:10.2f}", flush=True)
        last_done, last_t = done, now


async def soak(args: argparse.Namespace, base_url: str) -> list[tuple[float, ...]]:
    options = ClientOptions(base_url=base_url, timeout_s=60, stall_timeout_s=30)
    tally = Tally()
    writer = RecordWriter(Path(args.write)) if args.write else None
    stop = asyncio.Event()
    rows: list[tuple[float, ...]] = []
    async with make_session(options, args.concurrency, {}) as session:
        client = StreamingClient(session, options, args.model, "chat", args.output_tokens)
        source = builtin_source(args.input_tokens, args.output_tokens)
        level = ClosedLevel(
            key=LevelKey.closed(args.concurrency), n_requests=sys.maxsize,
            concurrency=args.concurrency,
        )
        t0 = time.perf_counter()
        watchers = [asyncio.create_task(watch_lag(tally)),
                    asyncio.create_task(report(tally, args.every, t0, rows))]
        asyncio.get_running_loop().call_later(args.minutes * 60, stop.set)
        io = LevelIO(client, source, tally.sink(writer), itertools.count(), stop)  # type: ignore[arg-type]
        await level.run(io)
        for task in watchers:
            task.cancel()
    if writer is not None:
        writer.close()
    print(f"ok {tally.ok} failed {tally.failed} {tally.reasons}")
    return rows


def verdict(rows: list[tuple[float, ...]]) -> None:
    """Compare the first and last third: RSS and fds must not keep growing."""
    if len(rows) < 6:
        print("too few samples for a verdict")
        return
    third = len(rows) // 3
    early, late = rows[1:third + 1], rows[-third:]  # skip the warm-up sample
    rss0, rss1 = statistics.median(r[4] for r in early), statistics.median(r[4] for r in late)
    fd0, fd1 = statistics.median(r[5] for r in early), statistics.median(r[5] for r in late)
    lag0 = statistics.median(r[6] for r in early)
    lag1 = statistics.median(r[6] for r in late)
    print(f"RSS MiB early {rss0:.1f} late {rss1:.1f} ({rss1 - rss0:+.1f}); "
          f"fds early {fd0:.0f} late {fd1:.0f}; lag p99 ms early {lag0:.2f} late {lag1:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--every", type=float, default=10.0, help="seconds between samples")
    parser.add_argument("--profile", default="deterministic")
    parser.add_argument("--model", default="servecap-sim-deterministic")
    parser.add_argument("--input-tokens", type=int, default=64)
    parser.add_argument("--output-tokens", type=int, default=32)
    parser.add_argument("--write", default=None, help="also append records to this JSONL")
    args = parser.parse_args()
    if args.minutes <= 0 or args.concurrency < 1:
        parser.error("--minutes must be > 0 and --concurrency >= 1")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the simulator child too
    with start_server_process(args.profile) as server:
        print(f"simulator {server.base_url}, c={args.concurrency}, {args.minutes:g} min",
              flush=True)
        rows = uvloop.run(soak(args, server.base_url))
    verdict(rows)


if __name__ == "__main__":
    main()
