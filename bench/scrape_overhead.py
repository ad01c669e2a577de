"""What scraping the server's /metrics costs the client, at 1 Hz and 10 Hz, at c=256.

Not a test: prints figures. The simulator runs in its own process; three runs of the same
c=256 level against it: scraping off, at 1 Hz and at 10 Hz.

Two figures per rate: (a) the direct share, the client CPU one scrape of the simulator's
/metrics costs (fetch + parse + write, measured alone over many scrapes; full at level edges
and every 10 s, mapped lines only between) times the scrapes the run made, over the run's
client CPU; (b) the run's client CPU and TTFT mean against the
run with scraping off (noisy on a shared machine; (a) is the figure to quote).

  python bench/scrape_overhead.py [--rounds 4] [--profile vllm-direct]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from servecap.api.run.run import run_benchmark_async  # noqa: E402
from servecap.api.run.run_config import RunConfig  # noqa: E402
from servecap.client.metrics_scrape import scrape_once  # noqa: E402
from servecap.core.config import ClientOptions  # noqa: E402
from servecap.core.secrets import Secrets  # noqa: E402
from servecap.sim import start_server_process  # noqa: E402
from servecap.storage.server_metrics_file import ScrapeWriter  # noqa: E402

C = 256


async def cpu_per_scrape(url: str, full: bool, n: int = 200) -> float:
    """Client CPU seconds of one scrape (fetch, parse in its thread, write the line)."""
    with tempfile.TemporaryDirectory() as tmp:
        writer = ScrapeWriter(Path(tmp) / "m.jsonl", Secrets(api_key="sk-bench-key").redact)
        async with aiohttp.ClientSession() as session:
            cpu0 = time.process_time()
            for _ in range(n):
                s = await scrape_once(session, url, full=full)
                writer.write(s.t_ns, s.duration_ms, s.series, s.samples, s.error, s.detail)
            cpu = time.process_time() - cpu0
        writer.close()
    return cpu / n


def one_run(base_url: str, mode: str, hz: float, rounds: int, out: str) -> tuple[float, float, int]:
    """(client CPU s, TTFT mean ms, scrapes) of one c=256 level."""
    config = RunConfig(
        concurrency=[C], rounds=rounds, output_tokens=64, warmup=8, out_dir=out,
        server_metrics=mode, metrics_hz=hz, client=ClientOptions(base_url=base_url),
    )
    cpu0 = time.process_time()
    outcome = asyncio.run(run_benchmark_async(config))
    cpu = time.process_time() - cpu0
    level = outcome.levels[0]
    return cpu, level.ttft_mean_ms or 0.0, int(outcome.info.server_metrics.get("scrapes", 0))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--profile", default="vllm-direct")
    args = parser.parse_args()
    # a fresh simulator per run: its prefix cache would make later runs faster
    with start_server_process(args.profile) as sim:
        url = sim.base_url.removesuffix("/v1") + "/metrics"
        full = asyncio.run(cpu_per_scrape(url, True))
        light = asyncio.run(cpu_per_scrape(url, False))
    print(f"one scrape of the simulator's /metrics: {full * 1e3:.2f} ms client CPU parsing "
          f"every sample, {light * 1e3:.2f} ms parsing the mapped ones")
    results = {}
    for mode, hz in (("off", 1.0), ("auto", 1.0), ("auto", 10.0)):
        with start_server_process(args.profile) as sim, tempfile.TemporaryDirectory() as out:
            results[(mode, hz)] = one_run(sim.base_url, mode, hz, args.rounds, out)
    base_cpu, base_ttft, _ = results[("off", 1.0)]
    print(f"c={C} off   : client CPU {base_cpu:.2f} s, TTFT mean {base_ttft:.1f} ms")
    for hz in (1.0, 10.0):
        cpu, ttft, scrapes = results[("auto", hz)]
        # the run's full scrapes: two per level edge pair plus one every 10 s
        n_full = min(scrapes, 3 + int(scrapes / hz / 10.0))
        direct = 100.0 * (full * n_full + light * (scrapes - n_full)) / cpu
        print(
            f"c={C} {hz:>4g} Hz: {scrapes} scrapes, direct share {direct:.2f}% of client CPU; "
            f"run CPU {cpu:.2f} s ({100 * (cpu / base_cpu - 1):+.1f}% vs off), "
            f"TTFT mean {ttft:.1f} ms ({ttft - base_ttft:+.1f} ms vs off)"
        )

if __name__ == "__main__":
    main()
