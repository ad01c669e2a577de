"""Files holding only aggregates become summary-only runs, field by field as the file has
them, with what could not be mapped listed; and bad files are refused before any write."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from servecap.storage.run_dir import load_run_info, load_summaries
from tests.seed_data import SEED_CSV
from tests.storage.formats.peer_files import (
    AIPERF,
    BR_EXAMPLE,
    GUIDELLM,
    SGLANG,
    VLLM_AGGREGATE,
    import_one,
    servecap,
)


def _only_level(run_dir: Path):
    levels = load_summaries(run_dir)
    assert levels is not None and len(levels) == 1
    return levels[0]


def test_benchmark_report_maps_each_field(tmp_path):
    report = yaml.safe_load(BR_EXAMPLE.read_text())
    aggregate = report["results"]["request_performance"]["aggregate"]
    level = _only_level(import_one(tmp_path, BR_EXAMPLE))
    ttft = aggregate["latency"]["time_to_first_token"]
    latency = aggregate["latency"]["request_latency"]
    assert str(level.key) == f"rate={report['scenario']['load']['standardized']['rate_qps']:g}/s"
    assert level.ttft_mean_ms == pytest.approx(ttft["mean"] * 1e3)
    assert level.ttft_p50_ms == pytest.approx(ttft["p50"] * 1e3)
    assert level.ttft_p90_ms == pytest.approx(ttft["p90"] * 1e3)
    assert level.ttft_p99_ms == pytest.approx(ttft["p99"] * 1e3)
    assert level.latency_mean_s == pytest.approx(latency["mean"])
    assert level.n_requests == aggregate["requests"]["total"]
    assert level.n_failed == aggregate["requests"]["failures"]
    assert level.rps == pytest.approx(aggregate["throughput"]["request_rate"]["mean"])
    assert level.output_tok_s == pytest.approx(
        aggregate["throughput"]["output_token_rate"]["mean"])
    assert level.tps_p90 is None and level.itl_mean_ms is None  # never approximated


def test_benchmark_report_run_lists_what_was_not_mapped(tmp_path):
    info = load_run_info(import_one(tmp_path, BR_EXAMPLE))
    assert info.imported["per_request"] is False
    assert info.imported["tool"] == "inference-perf"
    assert any("tps (per user" in item for item in info.imported["unmapped"])
    assert any("inter_token_latency mean" in note for note in info.notes)


def test_a_folder_of_partials_reads_as_one_report(tmp_path):
    """The example split into a stack partial (no stage) and a results partial."""
    report = yaml.safe_load(BR_EXAMPLE.read_text())
    folder = tmp_path / "partials"
    folder.mkdir()
    stack = {"version": "0.2.1", "run": report["run"],
             "scenario": {"stack": report["scenario"]["stack"]}}
    results = {"version": "0.2.1", "results": report["results"],
               "scenario": {"load": report["scenario"]["load"]}}
    (folder / "stack.yaml").write_text(yaml.safe_dump(stack))
    (folder / "results.yaml").write_text(yaml.safe_dump(results))
    whole = _only_level(import_one(tmp_path / "a", BR_EXAMPLE))
    merged = _only_level(import_one(tmp_path / "b", folder))
    assert merged.model_dump() == whole.model_dump()


def test_aiperf_without_its_records_is_summary_only(tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(AIPERF[0], alone / AIPERF[0].name)
    data = json.loads(AIPERF[0].read_text())
    run_dir = import_one(tmp_path / "out", alone / AIPERF[0].name)
    level = _only_level(run_dir)
    assert str(level.key) == "c=2"
    assert level.ttft_mean_ms == pytest.approx(data["time_to_first_token"]["avg"])
    assert level.ttft_p90_ms == pytest.approx(data["time_to_first_token"]["p90"])
    assert level.latency_p99_s == pytest.approx(data["request_latency"]["p99"] / 1e3)
    assert level.rps == pytest.approx(data["request_throughput"]["avg"])
    assert level.n_requests == 40 and level.tps_p90 is None
    info = load_run_info(run_dir)
    assert not (run_dir / "requests.jsonl").exists()
    assert any("no profile_export.jsonl" in item for item in info.imported["unmapped"])


def test_vllm_without_details_is_summary_only(tmp_path):
    data = json.loads(VLLM_AGGREGATE.read_text())
    run_dir = import_one(tmp_path, VLLM_AGGREGATE)
    level = _only_level(run_dir)
    assert str(level.key) == f"rate={data['request_rate']:g}/s"
    assert level.latency_mean_s == pytest.approx(data["mean_e2el_ms"] / 1e3)
    assert level.latency_p50_s == pytest.approx(data["median_e2el_ms"] / 1e3)
    assert level.latency_p90_s == pytest.approx(data["p90_e2el_ms"] / 1e3)
    assert level.latency_p99_s == pytest.approx(data["p99_e2el_ms"] / 1e3)
    assert level.wall_s == pytest.approx(data["duration"])
    assert level.rps == pytest.approx(data["completed"] / data["duration"])
    assert level.output_tok_s == pytest.approx(data["total_output_tokens"] / data["duration"])
    assert level.n_ok == data["completed"]
    # its TTFT counts a role-only first chunk: not servecap's TTFT, so not stored as one
    assert level.ttft_mean_ms is None and level.tps_p90 is None
    assert any("ttft aggregates" in item
               for item in load_run_info(run_dir).imported["unmapped"])


def test_the_seed_table_imports_as_before_through_both_names(tmp_path):
    for command in ("import", "import-summary"):
        code, output = servecap(command, str(SEED_CSV), "--out", str(tmp_path / command))
        assert code == 0, output
        assert len(output.split()) == 4  # one run per config


def _refused(tmp_path: Path, *files: Path) -> str:
    out = tmp_path / "never"
    code, output = servecap("import", *map(str, files), "--out", str(out))
    assert code == 2, output
    assert not out.exists()  # nothing written, even for the good file given first
    return " ".join(output.split())


def test_a_newer_schema_version_names_it_and_the_supported_ones(tmp_path):
    newer = tmp_path / "newer.yaml"
    report = yaml.safe_load(BR_EXAMPLE.read_text())
    newer.write_text(yaml.safe_dump({**report, "version": "0.3.0"}))
    text = _refused(tmp_path, GUIDELLM, newer)
    assert "'0.3.0'" in text and "supported: 0.2.1" in text
    aiperf = tmp_path / "profile_export_aiperf.json"
    aiperf.write_text(AIPERF[0].read_text().replace('"schema_version": "1.4"',
                                                     '"schema_version": "2.0"'))
    text = _refused(tmp_path, aiperf)
    assert "'2.0'" in text and "supported: 1.4" in text


def test_a_malformed_file_names_the_file_and_the_field(tmp_path):
    broken = tmp_path / "sglang.jsonl"
    lines = SGLANG.read_text().splitlines()
    run = json.loads(lines[0])
    run["ttfts"][3] = "fast"
    broken.write_text(json.dumps(run) + "\n" + lines[1] + "\n")
    text = _refused(tmp_path, broken)
    assert str(broken) in text and "ttfts" in text
    guidellm = tmp_path / "benchmarks.json"
    data = json.loads(GUIDELLM.read_text())
    del data["benchmarks"][1]["config"]["strategy"]
    guidellm.write_text(json.dumps(data))
    text = _refused(tmp_path, guidellm)
    assert str(guidellm) in text and "config.strategy" in text


def test_an_unrecognised_file_lists_the_formats_known(tmp_path):
    other = tmp_path / "notes.json"
    other.write_text('{"hello": 1}')
    text = _refused(tmp_path, other)
    for name in ("aiperf", "guidellm", "sglang-bench", "vllm-bench", "benchmark-report",
                 "appendix-csv"):
        assert name in text


def test_partials_of_two_stages_are_two_levels(tmp_path):
    report = yaml.safe_load(BR_EXAMPLE.read_text())
    folder = tmp_path / "stages"
    folder.mkdir()
    for stage, rate in ((3, 10.0), (4, 20.0)):
        load = json.loads(json.dumps(report["scenario"]["load"], default=str))
        load["standardized"].update(stage=stage, rate_qps=rate, concurrency=None)
        part = {"version": "0.2.1", "results": report["results"], "scenario": {"load": load}}
        (folder / f"stage{stage}.yaml").write_text(yaml.safe_dump(part))
    run_dir = import_one(tmp_path / "out", folder)
    assert [str(lv.key) for lv in load_summaries(run_dir) or []] == ["rate=10/s", "rate=20/s"]
    assert load_run_info(run_dir).imported["files"] == ["stage3.yaml", "stage4.yaml"]
