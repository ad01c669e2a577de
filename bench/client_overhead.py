"""How far the client bends what it measures, and what it costs: servecap beside a minimal
raw-asyncio client, in one run, against the same exact-schedule server.

Not a test: prints figures. The simulator's deterministic profile (first chunk 50 ms after a
request arrives, then one token every 10 ms, 128 tokens) runs as its own process pinned to
the last CPU; each client runs as its own process pinned to CPU 0 on uvloop: servecap as a
user runs it (`servecap run`, the whole process: scheduler, record writer, monitor), the raw
client as ~60 lines of asyncio streams that stamp each read and keep nothing else.

Per level (closed loop, c = 1, 64, 256): mean TTFT error (client's mean TTFT - 50 ms) and
mean ITL error (- 10 ms), and CPU per request over the level (process CPU while the level
ran / its requests), each with servecap's figure as a ratio to the raw client's. The
simulator's own first-token lateness over the same requests (from its /metrics) is printed
beside them: what part of the error is the server's. With `--passes 2` the second pass runs
the tools in the reverse order. Usage::

    python bench/client_overhead.py [--passes 2] [--rounds 3]
    python bench/client_overhead.py --raw-child URL C N   # internal: one raw-client level
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

TOKENS = 128
TTFT_MS, ITL_MS = 50.0, 10.0
MODEL = "servecap-sim-deterministic"
ROUNDS_AT_1 = 8  # a c=1 level is slow (1.3 s a request): fewer rounds, same figures


async def _raw_level(base_url: str, concurrency: int, n: int) -> dict[str, object]:
    """c streams of one keep-alive connection each, `n` requests in all, after one warm-up."""
    host_port = base_url.split("//")[1].split("/")[0]
    host, port = host_port.rsplit(":", 1)
    body = json.dumps({"model": MODEL, "max_tokens": TOKENS, "stream": True,
                       "messages": [{"role": "user", "content": "x" * 512}]}).encode()
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host_port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    conns: dict[int, tuple[asyncio.StreamReader, asyncio.StreamWriter]] = {}
    rows: list[tuple[int, int, int]] = []

    async def one(index: int) -> None:
        if index not in conns:
            conns[index] = await asyncio.open_connection(host, int(port))
        reader, writer = conns[index]
        sent = time.perf_counter_ns()
        writer.write(head + body)
        first = last = 0
        tail = b""
        while True:
            data = await reader.read(65536)
            now = time.perf_counter_ns()
            if not data:
                raise ConnectionError("server closed")
            if not first and b'"delta":{"content":"' in data:
                first = now  # the role-only chunk before it carries no token
            if b'"content":"' in data:
                last = now
            tail = (tail + data)[-16:]
            if tail.endswith(b"0\r\n\r\n"):
                break
        rows.append((sent, first, last))

    async def stream(index: int, count: int) -> None:
        for _ in range(count):
            await one(index)

    await one(0)  # warm-up, as servecap's --warmup 1
    rows.clear()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    per = n // concurrency
    await asyncio.gather(*(stream(i, per) for i in range(concurrency)))
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    for _, writer in conns.values():
        writer.close()
    ttft = [(f - s) / 1e6 for s, f, _ in rows]
    itl = [(la - f) / 1e6 / (TOKENS - 1) for _, f, la in rows]
    return {"n": len(rows), "ttft_mean_ms": sum(ttft) / len(ttft),
            "itl_mean_ms": sum(itl) / len(itl), "cpu_s": cpu, "wall_s": wall}


def raw_child(base_url: str, concurrency: int, n: int) -> None:
    import uvloop

    os.sched_setaffinity(0, {0})
    print(json.dumps(uvloop.run(_raw_level(base_url, concurrency, n))))


def run_raw(base_url: str, concurrency: int, n: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--raw-child", base_url, str(concurrency), str(n)],
        capture_output=True, text=True, check=True, timeout=600,
    )
    m = json.loads(out.stdout)
    return {"ttft_mean_ms": m["ttft_mean_ms"], "itl_mean_ms": m["itl_mean_ms"],
            "cpu_ms_per_req": 1000 * m["cpu_s"] / m["n"], "n": m["n"]}


def run_servecap(base_url: str, concurrency: int, rounds: int, out: Path) -> dict[str, float]:
    out.mkdir(parents=True)
    cmd = ["taskset", "-c", "0", "servecap", "run", "--base-url", base_url,
           "--concurrency", str(concurrency), "--rounds", str(rounds), "--warmup", "1",
           "--input-tokens", "128", "--output-tokens", str(TOKENS), "--out", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-1500:])
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    (level,) = json.loads((run_dir / "summary.json").read_text())
    # the monitor's CPU share of one core over the level, times the level's wall time
    cpu_s = (level["client_cpu_pct"] or 0.0) / 100.0 * level["wall_s"]
    return {"ttft_mean_ms": level["ttft_mean_ms"], "itl_mean_ms": level["itl_mean_ms"],
            "cpu_ms_per_req": 1000 * cpu_s / level["n_requests"], "n": level["n_requests"],
            "send_gap_p99_ms": level.get("send_gap_p99_ms") or float("nan"),
            "served_concurrency": level.get("served_concurrency") or float("nan"),
            "server_running": level.get("server_running_mean") or float("nan"),
            "client_bound": bool(level.get("client_bound"))}


def sim_first_token_lateness(base_url: str) -> tuple[float, float]:
    """The simulator's own sum of first-token write lateness (s) and how many it timed."""
    url = base_url.removesuffix("/v1") + "/metrics"
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    values = {line.split("{")[0]: float(line.rsplit(" ", 1)[1])
              for line in text.splitlines() if line.startswith("sim:first_token_lateness")}
    return (values.get("sim:first_token_lateness_seconds_total", 0.0),
            values.get("sim:first_token_lateness_chunks_total", 0.0))


def measured(name: str, base_url: str, c: int, rounds: int, tmp: Path) -> dict[str, float]:
    before = sim_first_token_lateness(base_url)
    if name == "raw":
        m = run_raw(base_url, c, c * rounds)
    else:
        m = run_servecap(base_url, c, rounds, tmp / f"{name}-{c}-{time.monotonic_ns()}")
    after = sim_first_token_lateness(base_url)
    chunks = after[1] - before[1]
    m["sim_first_late_ms"] = 1000 * (after[0] - before[0]) / chunks if chunks else float("nan")
    return m


def show(name: str, c: int, m: dict[str, float], raw: dict[str, float] | None) -> None:
    ttft_err, itl_err = m["ttft_mean_ms"] - TTFT_MS, m["itl_mean_ms"] - ITL_MS
    text = (f"  {name:9s} c={c:<4d} n={int(m['n']):<4d} TTFT err {ttft_err:+7.2f} ms  "
            f"ITL err {itl_err:+.3f} ms  CPU/req {m['cpu_ms_per_req']:.2f} ms  "
            f"(sim first-token late {m['sim_first_late_ms']:.2f} ms)")
    if raw is not None:
        raw_ttft = raw["ttft_mean_ms"] - TTFT_MS
        ratio = ttft_err / raw_ttft if raw_ttft > 0 else float("nan")
        text += (f"\n  {'':9s} ratio to raw: TTFT error {ratio:.2f}x, "
                 f"CPU/req {m['cpu_ms_per_req'] / raw['cpu_ms_per_req']:.2f}x; "
                 f"send gap p99 {m['send_gap_p99_ms']:.2f} ms, served concurrency "
                 f"{m['served_concurrency']:.1f} (the server's /metrics: "
                 f"{m['server_running']:.1f} running), client-bound {m['client_bound']}")
    print(text, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3, help="requests per stream at c>1")
    parser.add_argument("--levels", default="1,64,256", help="concurrencies to run")
    parser.add_argument("--raw-child", nargs=3, metavar=("URL", "C", "N"))
    args = parser.parse_args()
    if args.raw_child:
        raw_child(args.raw_child[0], int(args.raw_child[1]), int(args.raw_child[2]))
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from servecap.sim import start_server_process

    cpus = sorted(os.sched_getaffinity(0))
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; clients on CPU 0, "
          f"simulator on CPU {cpus[-1]}", flush=True)
    with tempfile.TemporaryDirectory() as tmp, start_server_process("deterministic") as sim:
        os.sched_setaffinity(sim.proc.pid, {cpus[-1]})
        for pass_ in range(args.passes):
            print(f"pass {pass_ + 1}" + (" (servecap first)" if pass_ % 2 else ""), flush=True)
            for c in (int(v) for v in args.levels.split(",")):
                rounds = ROUNDS_AT_1 if c == 1 else args.rounds
                order = ["servecap", "raw"] if pass_ % 2 else ["raw", "servecap"]
                results = {n: measured(n, sim.base_url, c, rounds, Path(tmp)) for n in order}
                show("raw", c, results["raw"], None)
                show("servecap", c, results["servecap"], results["raw"])
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
