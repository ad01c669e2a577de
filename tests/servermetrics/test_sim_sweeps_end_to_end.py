"""End to end on real simulator sweeps, scraped: what the server saw reaches the findings,
the report (its server view and timeline); tests/ui/test_server_view.py has the app's.

Each sweep is `servecap run` against `servecap sim` in its own process on 127.0.0.1, time
scaled. sglang-spec's KV budget holds 32 requests of 128 + 128 tokens, so at c=64 half of
them wait: the queue finding must name that level. vllm-spec speculates 7 tokens at a fixed
acceptance: the acceptance finding must report the share the server counted, which the
model fixes at sum(a^i, i=1..7) / 7 for its per-token acceptance a.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from servecap.analysis.findings import Finding
from servecap.api.run.run import run_benchmark_async
from servecap.api.run.run_config import RunConfig
from servecap.api.stored.report import ReportModel, ReportOptions, build_report, write_report
from servecap.core.config import ClientOptions
from servecap.sim import load_profile, start_server_process
from servecap.storage.runs import load_runs

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

SCALE = 4.0  # the model runs 4x faster than real time: the sweeps take seconds
#: a level's acceptance is a share of 500 or more seeded drafts (c >= 4, 4 rounds of 128
#: tokens), whose standard error is under 0.02: within this
ACCEPTANCE_TOL = 0.05


def _sweep(profile: str, levels: list[int], out: Path, rounds: int = 2) -> Path:
    """A scraped closed-loop run of ``profile`` at ``levels``; its run directory."""
    with start_server_process(profile, time_scale=SCALE) as sim:
        config = RunConfig(
            name=profile, concurrency=levels, rounds=rounds, input_tokens=128, output_tokens=128,
            warmup=0, out_dir=str(out), metrics_hz=10,
            client=ClientOptions(base_url=sim.base_url),
        )  # fmt: skip
        return asyncio.run(run_benchmark_async(config)).run_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("e2e")
    return {"sglang-spec": _sweep("sglang-spec", [8, 64], out),
            "vllm-spec": _sweep("vllm-spec", [4, 8], out, rounds=4)}  # fmt: skip


@pytest.fixture(scope="module")
def model(runs: dict[str, Path]) -> ReportModel:
    return build_report(load_runs(list(runs.values())), ReportOptions(title="e2e"))


def _findings(model: ReportModel, kind: str, config: str) -> list[Finding]:
    return [f for f in model.analysis.findings if f.kind == kind and config in f.configs]


def test_the_queue_finding_names_the_level_where_requests_wait(model: ReportModel) -> None:
    (queue,) = _findings(model, "server_queue", "sglang-spec")
    assert str(queue.level) == "c=64"
    assert queue.numbers["waiting_share"] >= 0.5 and queue.numbers["waiting_mean"] >= 1.0
    assert not _findings(model, "server_queue", "vllm-spec")  # 256 slots, no KV limit hit


def test_the_acceptance_finding_reports_what_the_server_counted(model: ReportModel) -> None:
    (found,) = [f for f in model.analysis.findings
                if f.kind.startswith("spec_acceptance") and "vllm-spec" in f.configs]  # fmt: skip
    params = load_profile("vllm-spec").params
    a, k = params.acceptance, params.num_spec_tokens
    expected = sum(a**i for i in range(1, k + 1)) / k
    assert found.numbers["acceptance_first"] == pytest.approx(expected, abs=ACCEPTANCE_TOL)
    assert found.numbers["acceptance_last"] == pytest.approx(expected, abs=ACCEPTANCE_TOL)
    assert found.kind == "spec_acceptance"  # a fixed acceptance does not fall


def test_the_report_shows_the_server_s_view_and_timeline(
    model: ReportModel, tmp_path: Path
) -> None:
    paths = write_report(model, tmp_path / "report")
    md = paths.markdown.read_text(encoding="utf-8")
    assert "## 14. The server's view" in md
    for name in ("sglang-spec", "vllm-spec"):
        assert f"{name}: the server's view per level" in md
        assert f"{name}: scraped http://127.0.0.1:" in md
    html = paths.html.read_text(encoding="utf-8")
    assert html.count('aria-label="timeline"') == 2
    figures = json.loads(_page_data(html))["figures"]
    (timeline,) = [fig for fig_id, fig in figures.items() if fig_id.startswith("timeline-")
                   and "sglang-spec" in fig["layout"]["title"]["text"]]  # fmt: skip
    traces = {trace.get("name"): trace for trace in timeline["data"]}
    assert {"server waiting", "server running", "client TTFT (ms)"} <= set(traces), set(traces)
    assert max(traces["server waiting"]["y"]) >= 2  # the queue at c=64, on the timeline


def _page_data(html: str) -> str:
    """The JSON report.html embeds for its script (figures by id among it)."""
    tag = '<script type="application/json" id="report-data">'
    start = html.index(tag) + len(tag)
    return html[start:html.index("</script>", start)]
