"""The prefix cache through whole runs against the simulator on 127.0.0.1 (a prefix-caching
profile): a built hit rate is served as built, by usage and by /metrics; a reset before each
level makes its first request miss again; a reset that fails is a warning, not a failure."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from servecap.api.run.run import RunOutcome, run_benchmark_async
from servecap.api.run.run_config import RunConfig
from servecap.core.config import ClientOptions
from servecap.core.records import RequestRecord
from servecap.core.workload_spec import WorkloadSpec
from servecap.sim.server.runner import SimProcessHandle, start_server_process
from servecap.storage.run_dir import REQUESTS_FILE
from servecap.storage.runs import load_run

PROFILE = """
name = "prefix-run"
model_id = "prefix-run"
[params]
idle_window_ms = 0.0
step_base_ms = 1.0
decode_ms_per_seq = 0.05
prefill_ms_per_token = 0.001
prefix_caching = true
prefix_block_tokens = 16
"""


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimProcessHandle]:
    path = tmp_path_factory.mktemp("prefix-run") / "prefix-run.toml"
    path.write_text(PROFILE, encoding="utf-8")
    with start_server_process(str(path)) as handle:
        yield handle


def _run(url: str, out: Path, **kw: Any) -> RunOutcome:
    config = RunConfig(output_tokens=4, out_dir=str(out), client=ClientOptions(base_url=url),
                       metrics_hz=10, **kw)
    return asyncio.run(run_benchmark_async(config))


def _rows(outcome: RunOutcome) -> list[RequestRecord]:
    lines = (outcome.run_dir / REQUESTS_FILE).read_text().splitlines()
    return [RequestRecord.from_dict(json.loads(line)) for line in lines]


def _firsts(outcome: RunOutcome) -> list[int | None]:
    """Each level's first request (by send time): the prompt tokens its cache served."""
    out = []
    rows = [r for r in _rows(outcome) if not r.warmup]
    for level in outcome.levels:
        mine = sorted((r for r in rows if r.key == level.key), key=lambda r: r.sent_at or 0)
        out.append(mine[0].cached_tokens)
    return out


def test_a_built_hit_rate_is_served_by_usage_and_metrics(sim: SimProcessHandle, tmp_path: Path
                                                         ) -> None:
    workload = WorkloadSpec(prefix_hit_rate=0.6)
    outcome = _run(sim.base_url, tmp_path, concurrency=[4], rounds=10, input_tokens=1024,
                   workload=workload)
    level = outcome.levels[0]
    assert level.n_ok == 40
    # 614 prefix tokens of 1024; the warm-up put the one prefix in the cache
    assert level.prefix_hit_target == 0.6
    assert level.prefix_hit_ideal == pytest.approx(614 / 1024)
    assert level.prefix_cached_requests == 40
    assert level.prefix_hit_rate_usage is not None and level.server_prefix_hit_rate is not None
    assert abs(level.prefix_hit_rate_usage - 0.6) <= 0.03, level.prefix_hit_rate_usage
    assert abs(level.server_prefix_hit_rate - 0.6) <= 0.03, level.server_prefix_hit_rate
    assert not [w for w in level.warnings if "prefix" in w], level.warnings
    info = json.loads((outcome.run_dir / "run.json").read_text())
    assert info["prefix_cache"]["hit_rate_ideal"] == pytest.approx(614 / 1024)
    assert info["prefix_cache"]["reset_done"] == "off"
    # a summary recomputed from the files keeps what the observers saw
    (outcome.run_dir / "summary.json").unlink()
    again = load_run(outcome.run_dir).levels[0]
    assert again.prefix_hit_ideal == level.prefix_hit_ideal
    assert again.prefix_hit_rate_usage == level.prefix_hit_rate_usage


def test_a_reset_makes_each_levels_first_request_miss(sim: SimProcessHandle, tmp_path: Path
                                                       ) -> None:
    shared = {"concurrency": [1, 2], "rounds": 3, "input_tokens": 512,
              "workload": WorkloadSpec(prefix_hit_rate=0.5)}
    kept = _run(sim.base_url, tmp_path / "kept", **shared)
    reset = _run(sim.base_url, tmp_path / "reset", reset_prefix_cache="auto", **shared)
    assert _firsts(kept) == [256, 256]  # the cache kept the prefix from the level before
    assert _firsts(reset) == [0, 0]  # emptied before each level: the first one misses
    assert [lv.prefix_cache_reset for lv in reset.levels] == ["done", "done"]
    assert [lv.prefix_cache_reset for lv in kept.levels] == [None, None]
    info = json.loads((reset.run_dir / "run.json").read_text())
    assert info["prefix_cache"]["reset_done"].startswith("auto: POST http://127.0.0.1:")
    assert info["prefix_cache"]["reset_done"].endswith("/reset_prefix_cache (servecap-sim)")
    # after the first miss the level's other requests hit again
    later = [r.cached_tokens for r in _rows(reset) if not r.warmup]
    assert later.count(0) == 2 and all(c in (0, 256) for c in later)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("where", ["404", "refused"])
def test_a_failed_reset_is_a_warning(sim: SimProcessHandle, tmp_path: Path, where: str) -> None:
    root = sim.base_url.removesuffix("/v1")
    url = root + "/no_such_reset" if where == "404" else f"http://127.0.0.1:{_closed_port()}/r"
    outcome = _run(sim.base_url, tmp_path, concurrency=[1, 2], rounds=2, reset_prefix_cache=url)
    assert outcome.info.status == "complete"
    assert [lv.n_ok for lv in outcome.levels] == [2, 4]
    for level in outcome.levels:
        assert level.prefix_cache_reset is not None
        assert level.prefix_cache_reset.startswith("failed: ")
        assert ("HTTP 404" in level.prefix_cache_reset) == (where == "404")
        assert any(w.startswith("prefix cache reset before the level failed")
                   for w in level.warnings)
