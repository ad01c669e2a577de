"""The simulator's /metrics tells the truth, and scrapes line up with requests on one clock.

A whole run against the simulator (its own process, 127.0.0.1): the last scrape's counters
equal what the client received, the served TTFT/ITL histograms count every request and
token, and every scrape that saw requests running is stamped while the client had some in
flight.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from servecap.api.run.run import RunOutcome, run_benchmark_async
from servecap.api.run.run_config import RunConfig
from servecap.core.config import ClientOptions
from servecap.sim import SimProcessHandle, start_server_process
from servecap.storage.server_metrics_file import SERVER_METRICS_FILE, read_scrapes

pytestmark = pytest.mark.slow  # each module's fixture runs a whole run

PROFILE = """
name = "metrics-truth"
model_id = "metrics-truth"
[params]
idle_window_ms = 0.0
step_base_ms = 4.0
decode_ms_per_seq = 0.5
max_num_seqs = 2
kv_budget_tokens = 100000
num_spec_tokens = 3
acceptance = 0.6
"""


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimProcessHandle]:
    path = tmp_path_factory.mktemp("truth") / "metrics-truth.toml"
    path.write_text(PROFILE, encoding="utf-8")
    with start_server_process(str(path)) as handle:
        yield handle


@pytest.fixture(scope="module")
def outcome(sim: SimProcessHandle, tmp_path_factory: pytest.TempPathFactory) -> RunOutcome:
    config = RunConfig(
        concurrency=[1, 4], rounds=6, input_tokens=64, output_tokens=40, warmup=1,
        out_dir=str(tmp_path_factory.mktemp("runs")), metrics_hz=10,
        client=ClientOptions(base_url=sim.base_url),
    )
    return asyncio.run(run_benchmark_async(config))


def _records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "requests.jsonl").read_text().splitlines()]


def test_counters_equal_what_the_client_received(outcome: RunOutcome) -> None:
    rows = _records(outcome.run_dir)
    last = [s for s in read_scrapes(outcome.run_dir / SERVER_METRICS_FILE) if s.error is None][-1]
    tokens = sum(r["completion_tokens"] for r in rows)
    assert last.series["generation_tokens"] == tokens
    assert last.series["prompt_tokens"] == sum(r["prompt_tokens"] for r in rows)
    assert last.series["ttft_count"] == len(rows)  # one first token per request
    assert last.series["itl_count"] == tokens - len(rows)  # every later token
    assert last.series["preemptions"] == 0
    assert last.series["spec_draft_tokens"] == 3 * last.series["spec_drafts"] > 0
    assert last.series["running"] == 0 and last.series["waiting"] == 0


def test_levels_see_the_queue_only_when_it_exists(outcome: RunOutcome) -> None:
    c1, c4 = outcome.levels
    # one stream: at most its one request, which a scrape may catch in the moment between
    # its arrival and the engine admitting it (seen beside a CPU hog: waiting 1); a queue
    # of two or more only where 4 streams share 2 slots
    assert (c1.server_waiting_max or 0) <= 1 and c1.server_running_max == 1
    assert c4.server_running_max == 2 and (c4.server_waiting_max or 0) >= 2
    assert 0 < (c4.server_spec_acceptance or 0) < 1
    assert c4.server_spec_accept_length == pytest.approx(1 + 3 * c4.server_spec_acceptance)


def test_scrapes_and_requests_share_one_clock(outcome: RunOutcome) -> None:
    rows = _records(outcome.run_dir)  # the warm-up request too: scraping starts before it
    busy = [s for s in read_scrapes(outcome.run_dir / SERVER_METRICS_FILE)
            if s.error is None and s.series.get("running", 0) > 0]
    assert busy
    for scrape in busy:
        half = int(scrape.ms * 1e6 / 2) + 1
        assert any(
            r["sent_at"] <= scrape.t_ns + half and r["ended_at"] >= scrape.t_ns - half
            for r in rows
        ), "a scrape saw requests running while the client had none in flight"
