"""servecap's numbers against llama-server's own timings, concurrency 1..8.

Not a test: prints a table. Starts llama-server (built or reused from the cache, see
scripts/build_llama_server.sh) with 8 slots on the tiny test model, runs one `servecap run`
sweep over levels 1..8, and compares per level:

- ITL: servecap's mean per-request ITL (client clock, first to last token chunk / (N - 1))
  against llama-server's `timings.predicted_per_token_ms` (server clock; it equals
  predicted_ms / (predicted_n - 1), so both are per gap);
- TTFT: servecap's mean TTFT against the server's `prompt_ms` (prefill only: the difference
  is HTTP, queueing for a slot and the first decode step).

  python bench/engine_crosscheck.py [--rounds 4] [--output-tokens 64] [--threads 1]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.engines import procs, sweep  # noqa: E402
from tests.engines.tinymodel import ensure_model  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--output-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="llama-server -t")
    args = parser.parse_args()
    binary = procs.llama_server_binary(build=True)
    assert binary is not None
    model = ensure_model()
    with tempfile.TemporaryDirectory(prefix="crosscheck-") as tmp:
        engine = procs.llama_server(binary, model.gguf, Path(tmp), threads=args.threads)
        engine.start(health_timeout_s=60)
        try:
            started = time.monotonic()
            run_dir = sweep.run_sweep(
                engine.base_url, "tiny", Path(tmp) / "runs", "crosscheck",
                levels="1,2,3,4,5,6,7,8", rounds=args.rounds,
                output_tokens=args.output_tokens, extra_body=sweep.LLAMA_EXTRA_BODY,
            )
            elapsed = time.monotonic() - started
        finally:
            engine.stop()
        rows = sweep.crosscheck(sweep.measured(run_dir))
    print(f"llama-server {binary}, -np {procs.SLOTS} -t {args.threads}; "
          f"{args.rounds} rounds x c, {sweep.INPUT_TOKENS} in / {args.output_tokens} out tokens;"
          f" sweep {elapsed:.0f} s")
    print("| c | ok | failed | servecap ITL ms | llama-server ms/token | ratio |"
          " servecap TTFT ms | server prompt ms |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r.concurrency} | {r.n} | {r.n_failed} | {r.servecap_itl_ms:.3f} | "
              f"{r.engine_itl_ms:.3f} | {r.ratio:.3f} | {r.servecap_ttft_ms:.2f} | "
              f"{r.engine_prompt_ms:.2f} |")

if __name__ == "__main__":
    main()
