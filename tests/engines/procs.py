"""Start a real inference engine as a process on 127.0.0.1, wait for health, stop it by PID.

Each engine runs in its own session (process group), so teardown signals the whole group:
SIGTERM, a grace period, then SIGKILL. Nothing is left behind, even when an engine forks.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from tests.engines.tinymodel import cache_root

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "scripts" / "build_llama_server.sh"
VLLM_INSTALL_SCRIPT = REPO / "scripts" / "install_vllm_cpu.sh"
LLAMA_CPP_PYTHON_VERSION = "0.3.36"
SLOTS = 8
CTX_PER_SLOT = 512
CB_NUM_BLOCKS = 256
# transformers sizes its batch buffers for 8192 tokens a step by default (4.0 GB here) and
# checks them against the NUMA node's memory, which a VM may report far below the machine's
# (6.1 of 24 GB seen): the worker then dies on the first request. 2048 holds the tests' biggest
# step (8 prompts of 128 tokens and their chat template) whole.
CB_MAX_BATCH_TOKENS = 2048


def free_port() -> int:
    """A port the kernel says is free on 127.0.0.1 now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Engine:
    """A running engine: its command, base URL and process (stopped with `stop`)."""

    name: str
    argv: list[str]
    port: int
    log_path: Path
    env: dict[str, str] = field(default_factory=dict)
    model: str = ""
    proc: subprocess.Popen[bytes] | None = None

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return self.root + "/v1"

    def start(self, health_timeout_s: float = 120.0) -> Engine:
        self.launch()
        try:
            self.wait_healthy(health_timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    def launch(self) -> Engine:
        """Start the process without waiting for health (to start several at once)."""
        log = self.log_path.open("wb")
        try:
            self.proc = subprocess.Popen(
                self.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env={**os.environ, **self.env}, start_new_session=True,
            )
        finally:
            log.close()
        return self

    def wait_healthy(self, timeout_s: float) -> None:
        """Poll GET /health until 200; fail early with the log tail if the process dies."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(self.root + "/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.25)  # poll
        raise TimeoutError(f"{self.name} not healthy after {timeout_s} s:\n{self.log_tail()}")

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM the engine's process group, then SIGKILL what is left."""
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(timeout=wait_s)
                break
            except subprocess.TimeoutExpired:
                continue
        with contextlib.suppress(ProcessLookupError):  # children that outlived the leader
            os.killpg(proc.pid, signal.SIGKILL)

    def log_tail(self, n_bytes: int = 3000) -> str:
        try:
            return self.log_path.read_bytes()[-n_bytes:].decode(errors="replace")
        except OSError:
            return "(no log)"


def llama_server_binary(build: bool = True) -> Path | None:
    """`$LLAMA_SERVER_BIN`, else the cached build, else build it (minutes) when `build`."""
    env = os.environ.get("LLAMA_SERVER_BIN")
    if env:
        return Path(env)
    cached = cache_root() / "llama-server" / LLAMA_CPP_PYTHON_VERSION / "bin" / "llama-server"
    if cached.is_file() or not build:
        return cached if cached.is_file() else None
    result = subprocess.run(
        ["bash", str(BUILD_SCRIPT)], capture_output=True, text=True, check=False,
        env={**os.environ, "LLAMA_CPP_PYTHON_VERSION": LLAMA_CPP_PYTHON_VERSION},
    )
    if result.returncode != 0:
        raise RuntimeError(f"llama-server build failed:\n{result.stderr[-4000:]}")
    return Path(result.stdout.strip().splitlines()[-1])


def llama_server(binary: Path, gguf: Path, log_dir: Path, threads: int = 1) -> Engine:
    """llama-server with 8 slots of 512 context each, /metrics on; any model name is accepted."""
    port = free_port()
    argv = [
        str(binary), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port),
        "-np", str(SLOTS), "-c", str(SLOTS * CTX_PER_SLOT), "-t", str(threads),
        "--alias", "tiny", "--no-webui", "--metrics",
    ]
    return Engine("llama-server", argv, port, log_dir / "llama-server.log", model="tiny")


def transformers_serve(hf_dir: Path, log_dir: Path) -> Engine:
    """`transformers serve <folder>` with continuous batching and a bounded KV cache."""
    exe = shutil.which("transformers") or str(Path(sys.executable).with_name("transformers"))
    port = free_port()
    argv = [
        exe, "serve", str(hf_dir), "--host", "127.0.0.1", "--port", str(port),
        "--continuous-batching", "--cb-num-blocks", str(CB_NUM_BLOCKS),
        "--cb-max-batch-tokens", str(CB_MAX_BATCH_TOKENS), "--device", "cpu",
    ]
    env = {"OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return Engine("transformers-serve", argv, port, log_dir / "transformers-serve.log",
                  env=env, model=str(hf_dir))


# vLLM's context for the tests' servers: the tiny model's 4,096 would let a "too long" request
# pass; 2,048 holds every request the tests send but that one.
VLLM_MAX_MODEL_LEN = 2048
# vLLM's CPU attention caches prefixes in 128-token blocks by default, which floors a short
# shared prefix to no hit at all; 32 is the smallest block it accepts ("MultipleOf(32)").
VLLM_BLOCK_TOKENS = 32
# n-gram drafts of 4 tokens, looked up by the last 2 to 4 tokens (vLLM's documented example
# shape); the copying model's output repeats itself, so they are mostly accepted.
VLLM_NGRAM = '{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4, ' \
    '"prompt_lookup_min": 2}'


def vllm_python(install: bool = True) -> Path | None:
    """`$VLLM_PYTHON`, else the cached vLLM virtualenv, else install it (minutes) when asked."""
    env = os.environ.get("VLLM_PYTHON")
    if env:
        return Path(env)
    if not install:
        return None
    result = subprocess.run(["bash", str(VLLM_INSTALL_SCRIPT)], capture_output=True, text=True,
                            check=False)
    if result.returncode != 0:
        raise RuntimeError(f"vLLM install failed:\n{result.stderr[-4000:]}")
    return Path(result.stdout.strip().splitlines()[-1])


def vllm_server(python: Path, hf_dir: Path, log_dir: Path, name: str,
                speculative: bool = False) -> Engine:
    """vLLM's OpenAI server on the CPU: float32, eager, prefix caching with cached-token usage,
    the development endpoints (`POST /reset_prefix_cache`) on, optionally n-gram speculation.

    `python -m vllm.entrypoints.openai.api_server`, deprecated in favour of `vllm serve`,
    because the `vllm` command of the vllm-cpu distribution fails before it starts: it reads
    its own version as `importlib.metadata.version("vllm")`, a distribution that is not
    installed under that name. `--enforce-eager` skips torch.compile: CI's time needs a
    quick start more than fast decode steps.

    On a machine of two cores or more the server is pinned to core 0 and servecap's client
    measures from the others: vLLM's CPU worker spins on its core while it generates, and a
    client sharing it reads whole answers at once (docs/validation/vllm-live.md).
    """
    port = free_port()
    pin = ["taskset", "-c", "0"] if (os.cpu_count() or 1) >= 2 and shutil.which("taskset") else []
    argv = [
        *pin, str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(hf_dir),
        "--served-model-name", "tiny", "--host", "127.0.0.1", "--port", str(port),
        "--dtype", "float32", "--max-model-len", str(VLLM_MAX_MODEL_LEN), "--enforce-eager",
        "--enable-prompt-tokens-details", "--block-size", str(VLLM_BLOCK_TOKENS),
    ]
    if speculative:
        argv += ["--speculative-config", VLLM_NGRAM]
    env = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_SERVER_DEV_MODE": "1", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1"}
    return Engine(name, argv, port, log_dir / f"{name}.log", env=env, model="tiny")
