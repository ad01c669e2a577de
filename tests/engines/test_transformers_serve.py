"""servecap against Hugging Face `transformers serve` (CPU, continuous batching, tiny model).

transformers serve ends a stream without `[DONE]` and puts usage on the finish_reason chunk
whatever the request asks: servecap must take both as a complete, usage-counted request.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engines import checks
from tests.engines.procs import Engine
from tests.engines.sweep import read_json, run_sweep, servecap, transformers_extra_body

pytestmark = [pytest.mark.engine, pytest.mark.slow, pytest.mark.timeout(900)]

LEVELS = (1, 2, 4, 8)
ROUNDS = 2


@pytest.fixture(scope="module")
def tf_run(transformers_engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tf-runs")
    return run_sweep(
        transformers_engine.base_url, transformers_engine.model, out, "transformers-tiny",
        levels=",".join(map(str, LEVELS)), rounds=ROUNDS, extra_body=transformers_extra_body(),
    )


def test_wire_style_no_done_usage_on_finish_chunk(transformers_engine: Engine) -> None:
    payloads = checks.raw_stream(transformers_engine.base_url, transformers_engine.model)
    assert "[DONE]" not in payloads
    chunks = checks.parse_chunks(payloads)
    finish = [c for c in chunks if c["choices"] and c["choices"][0].get("finish_reason")]
    assert len(finish) == 1 and finish[0] is chunks[-1]
    assert finish[0]["usage"]["completion_tokens"] == 4


def test_other_model_names_are_refused(transformers_engine: Engine) -> None:
    with pytest.raises(Exception, match="400"):
        checks.raw_stream(transformers_engine.base_url, "not-the-folder")


def test_sweep_every_request_ok_with_usage(tf_run: Path) -> None:
    records = checks.assert_sweep_ok(tf_run, LEVELS, ROUNDS)
    checks.assert_prompt_lengths(records)


def test_plan_and_report_work_on_the_run(tf_run: Path, tmp_path: Path) -> None:
    plan = servecap("plan", str(tf_run), "--format", "json", "--tps-slo", "1")
    assert plan.returncode == 0, plan.stderr
    report = servecap("report", str(tf_run), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    assert any((tmp_path / "report").iterdir())


def test_run_json_names_the_model_folder(tf_run: Path, transformers_engine: Engine) -> None:
    info = read_json(tf_run / "run.json")
    assert info["config"]["model"] == transformers_engine.model
    assert transformers_engine.model in info["server"]["models"]
