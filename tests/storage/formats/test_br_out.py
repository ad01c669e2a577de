"""BR v0.2.1 partials out: a real run against the simulator writes one a level into its br/,
each valid against llm-d-benchmark's own published schema, nulls stripped, deep-mergeable
with a stack partial; their numbers are the run's own level summaries in BR's units; a run
exported later (and one stored in an older format) gets the same partials."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from servecap.cli.main import app
from servecap.core.level_key import LevelKey
from servecap.core.request_metrics import request_metrics
from servecap.core.summary import LevelSummary
from servecap.storage.formats.br_in import deep_merge
from servecap.storage.formats.br_out import BR_DIR, write_partials_or_note
from servecap.storage.formats.br_stats import PERCENTILES
from servecap.storage.import_summary import import_summary
from servecap.storage.runs import load_run
from tests.storage.formats.conftest import BR_DATA, nulls_or_empties

pytestmark = pytest.mark.timeout(120)


def partials(run_dir: Path) -> dict[str, dict[str, Any]]:
    return {p.name: json.loads(p.read_text()) for p in sorted((run_dir / BR_DIR).iterdir())}


def example() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((BR_DATA / "br_v0_2_1_example.yaml").read_text())
    return loaded


def test_the_published_example_validates_and_the_check_can_fail(br_validator: Any) -> None:
    doc = example()
    br_validator.validate(doc)
    bad = deep_merge(doc, {"results": {"request_performance": {"aggregate": {"latency": {
        "time_to_first_token": {"units": "seconds", "mean": 1.0}}}}}})
    with pytest.raises(jsonschema.ValidationError):
        br_validator.validate(bad)  # "seconds" is not in the schema's Units enum
    with pytest.raises(jsonschema.ValidationError):
        br_validator.validate({"version": "0.2.1", "results": {}})  # run (uid) is required


def test_a_run_writes_one_valid_partial_a_level(closed_run: Path, br_validator: Any) -> None:
    docs = partials(closed_run)
    assert list(docs) == ["01-c-1.json", "02-c-4.json"]
    uids = set()
    for stage, (doc, streams) in enumerate(zip(docs.values(), (1, 4), strict=True)):
        br_validator.validate(doc)
        assert nulls_or_empties(doc) == []
        assert doc["version"] == "0.2.1" and "stack" not in doc["scenario"]
        load = doc["scenario"]["load"]["standardized"]
        assert (load["tool"], load["stage"], load["concurrency"]) == ("servecap", stage, streams)
        assert "rate_qps" not in load and load["source"] == "random"
        assert load["input_seq_len"]["value"] > 0
        assert doc["run"]["eid"] == closed_run.name
        uids.add(doc["run"]["uid"])
        time = doc["run"]["time"]
        start, end = (datetime.fromisoformat(time[k]) for k in ("start", "end"))
        assert start < end and time["duration"].startswith("PT")
        stats = doc["results"]["request_performance"]["aggregate"]["latency"]
        assert set(stats["time_to_first_token"]) == {"units", "mean", "stddev", *PERCENTILES}
    assert len(uids) == 2
    assert oct((closed_run / BR_DIR).stat().st_mode & 0o777) == "0o700"


def _check_distribution(block: dict[str, Any], summary: LevelSummary, metric: str,
                        unit: str, scale: float) -> None:
    for stat in ("mean", "p50", "p90", "p99"):
        expected = getattr(summary, f"{metric}_{stat}{unit}")
        assert block[stat] == pytest.approx(expected / scale, rel=1e-9), (metric, stat)


def test_the_numbers_are_the_level_summaries(closed_run: Path) -> None:
    run = load_run(closed_run)
    tps_by_level: dict[LevelKey, list[float]] = {}
    for record in run.iter_records():
        metrics = request_metrics(record)
        if not record.warmup and metrics is not None and metrics.tps is not None:
            tps_by_level.setdefault(record.key, []).append(metrics.tps)
    for summary, doc in zip(run.levels, partials(closed_run).values(), strict=True):
        aggregate = doc["results"]["request_performance"]["aggregate"]
        latency, throughput = aggregate["latency"], aggregate["throughput"]
        assert latency["time_to_first_token"]["units"] == "s"
        _check_distribution(latency["time_to_first_token"], summary, "ttft", "_ms", 1000)
        _check_distribution(latency["request_latency"], summary, "latency", "_s", 1)
        assert latency["time_per_output_token"]["units"] == "s/token"
        _check_distribution(latency["time_per_output_token"], summary, "itl", "_ms", 1000)
        # one token a chunk on the simulator: the chunk gaps are inter-token gaps
        _check_distribution(latency["inter_token_latency"], summary, "chunk_gap", "_ms", 1000)
        # NTPOT is latency / N, a request's 1 / TPS: its ends are the fastest and slowest TPS
        ntpot = latency["normalized_time_per_output_token"]
        tps = tps_by_level[summary.key]
        assert ntpot["min"] == pytest.approx(1 / max(tps)) and ntpot["max"] == pytest.approx(
            1 / min(tps))
        assert ntpot["units"] == "s/token" and summary.tps_mean == pytest.approx(
            sum(tps) / len(tps))
        assert throughput["request_rate"]["units"] == "queries/s"
        assert throughput["request_rate"]["mean"] == pytest.approx(summary.rps, rel=1e-12)
        assert throughput["output_token_rate"]["units"] == "tokens/s"
        assert throughput["output_token_rate"]["mean"] == pytest.approx(
            summary.output_tok_s, rel=1e-12)
        inputs = throughput["input_token_rate"]["mean"]
        assert throughput["total_token_rate"]["mean"] == pytest.approx(
            inputs + summary.output_tok_s)
        assert inputs == pytest.approx(summary.prompt_tokens_mean * summary.rps)
        requests = aggregate["requests"]
        assert (requests["total"], requests["failures"]) == (summary.n_requests, 0)
        assert requests["input_length"]["mean"] == pytest.approx(summary.prompt_tokens_mean)
        assert requests["output_length"]["mean"] == pytest.approx(summary.completion_tokens_mean)
        assert requests["output_length"]["units"] == "count"


def test_observability_is_what_metrics_gave(closed_run: Path) -> None:
    run = load_run(closed_run)
    for summary, doc in zip(run.levels, partials(closed_run).values(), strict=True):
        (component,) = doc["results"]["observability"]["components"]
        aggregate = component["aggregate"]
        assert component["component_label"] == "server"
        assert aggregate["running_requests"] == {
            "units": "count", "mean": summary.server_running_mean,
            "max": summary.server_running_max}
        assert summary.server_kv_usage_mean is not None
        assert aggregate["kv_cache_usage"]["units"] == "percent"
        assert aggregate["kv_cache_usage"]["mean"] == pytest.approx(
            100 * summary.server_kv_usage_mean)


def test_merged_with_a_stack_partial_it_still_validates(
    closed_run: Path, br_validator: Any
) -> None:
    stack = {"version": "0.2.1", "scenario": {"stack": example()["scenario"]["stack"]},
             "run": {"uid": "stack-side", "cid": "cluster-7"}}
    for doc in partials(closed_run).values():
        for merged in (deep_merge(stack, doc), deep_merge(doc, stack)):
            br_validator.validate(merged)
            assert merged["scenario"]["stack"][0]["metadata"]["label"] == "vllm-svc-0"
            assert merged["results"] == doc["results"] and merged["run"]["cid"] == "cluster-7"
            assert merged["run"]["eid"] == doc["run"]["eid"]


def test_export_writes_the_same_partials_again(closed_run: Path, tmp_path: Path) -> None:
    run_dir = shutil.copytree(closed_run, tmp_path / closed_run.name)
    written = partials(run_dir)
    shutil.rmtree(run_dir / BR_DIR)
    result = CliRunner().invoke(app, ["export", str(run_dir), "--format", "br"])
    assert result.exit_code == 0, result.output
    assert partials(run_dir) == written
    elsewhere = tmp_path / "elsewhere"
    result = CliRunner().invoke(
        app, ["export", str(run_dir), "--format", "br", "--out", str(elsewhere)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in elsewhere.iterdir()) == list(written)


# Fields of requests.jsonl rows that came later than the first stored format.
NEWER_ROW_FIELDS = ("first_answer_at", "chunk_tokens", "reconnects", "missing_done",
                    "utf8_replaced", "server_timings", "client_delay_ms",
                    "input_tokens_sent", "max_tokens_sent", "connect_ms", "finish_reason")


def _as_older_format(run_dir: Path) -> None:
    """The run as the first stored format held it: rows without the later fields, no
    summary files (recomputed on load), a run.json of name, config and the clock anchor."""
    rows = [json.loads(line) for line in (run_dir / "requests.jsonl").read_text().splitlines()]
    old = [{k: v for k, v in row.items() if k not in NEWER_ROW_FIELDS} for row in rows]
    (run_dir / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in old))
    (run_dir / "summary.json").unlink()
    (run_dir / "summary.csv").unlink()
    info = json.loads((run_dir / "run.json").read_text())
    keep = ("schema_version", "name", "status", "tool_version", "created_at",
            "anchor_wall_ns", "anchor_perf_ns")
    older = {k: info[k] for k in keep}
    older["config"] = {"concurrency": [1, 4], "rounds": 4}
    (run_dir / "run.json").write_text(json.dumps(older))


def test_a_run_stored_in_an_older_format_exports(
    closed_run: Path, tmp_path: Path, br_validator: Any
) -> None:
    run_dir = shutil.copytree(closed_run, tmp_path / closed_run.name)
    written = partials(run_dir)
    shutil.rmtree(run_dir / BR_DIR)
    _as_older_format(run_dir)
    result = CliRunner().invoke(app, ["export", str(run_dir), "--format", "br"])
    assert result.exit_code == 0, result.output
    again = partials(run_dir)
    assert list(again) == list(written)
    for name, doc in again.items():
        br_validator.validate(doc)
        old = written[name]["results"]["request_performance"]["aggregate"]
        new = doc["results"]["request_performance"]["aggregate"]
        assert new["latency"]["time_to_first_token"] == old["latency"]["time_to_first_token"]
        assert new["requests"] == old["requests"]
        # observability came from run.json's observers, which the older format lacked
        assert "observability" not in doc["results"]


def test_a_partial_that_cannot_be_written_is_a_note(closed_run: Path, tmp_path: Path) -> None:
    run_dir = shutil.copytree(closed_run, tmp_path / closed_run.name)
    shutil.rmtree(run_dir / BR_DIR)
    (run_dir / BR_DIR).write_text("a file where the folder goes")
    summaries = (run_dir / "summary.json").read_text()
    note = write_partials_or_note(load_run(run_dir))
    assert note is not None and note.startswith("Benchmark Report partials (br/) not written")
    info = json.loads((run_dir / "run.json").read_text())
    assert note in info["notes"] and info["status"] == "complete"
    assert (run_dir / "summary.json").read_text() == summaries


def test_bad_input_is_one_message_and_exit_2(closed_run: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    cases = [
        (["export", str(tmp_path / "nowhere"), "--format", "br"], "not a run directory"),
        (["export", str(closed_run), "--format", "xml"], "unknown format 'xml'"),
    ]
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    cases.append((["export", str(closed_run), "--format", "br", "--out", str(a_file)],
                  "it is a file, not a directory"))
    imported = import_summary(BR_DATA.parent / "kimi-k3-b300-appendix-a.csv", tmp_path / "imp")
    cases.append((["export", str(imported[0]), "--format", "br"], "imported, not measured"))
    for args, message in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and "Traceback" not in result.output


def test_the_report_says_where_the_partials_are(closed_run: Path, tmp_path: Path) -> None:
    from servecap.api.stored.report import build_report

    row = dict(build_report([load_run(closed_run)]).methodology)["Benchmark Report v0.2.1"]
    assert row == f"{closed_run / BR_DIR}/ (2 partials, one a level)"
    run_dir = shutil.copytree(closed_run, tmp_path / closed_run.name)
    shutil.rmtree(run_dir / BR_DIR)
    row = dict(build_report([load_run(run_dir)]).methodology)["Benchmark Report v0.2.1"]
    assert row == f"none yet: servecap export {run_dir} --format br"
