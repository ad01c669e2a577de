"""Bootstrap intervals per level: stored in summary.json (not the CSV), read by `plan`,
pass / fail / undecided verdicts, too-few-samples warnings, and C_max's bracket."""

import csv
import json

import numpy as np
from typer.testing import CliRunner

from servecap.api.stored.plan import plan_runs
from servecap.cli.main import app
from servecap.core.config import SLO
from servecap.core.records import RequestRecord
from servecap.core.summary import SUMMARY_COLUMNS, IntervalSummary, LevelSummary
from servecap.kinds.registry import kind_of
from servecap.metrics.level import summarise_level
from servecap.stats.capacity import plan_levels
from servecap.storage.run_dir import load_summaries, write_summaries
from servecap.storage.runs import load_runs

MS = 1_000_000


def record(i, ttft_ms, latency_ms, tokens=20):
    sent = i * 1000 * MS
    first = sent + int(ttft_ms * MS)
    end = sent + int(latency_ms * MS)
    chunks = list(np.linspace(first, end, tokens).astype(int))
    return RequestRecord(
        request_id=i, concurrency=4, stream_index=i % 4, scheduled_at=sent, sent_at=sent,
        first_byte_at=first, first_token_at=first, first_answer_at=first,
        last_token_at=end, ended_at=end, chunk_at=chunks, chunk_tokens=[1] * tokens,
        completion_tokens=tokens, token_source="usage",
    )


def level_from(n, seed=1):
    rng = np.random.default_rng(seed)
    ttfts = rng.uniform(50, 150, n)
    return summarise_level(4, [record(i, t, t + 400) for i, t in enumerate(ttfts)])


def test_summary_carries_intervals_around_its_own_columns():
    level = level_from(60)
    assert level.intervals is not None
    for metric in ("ttft", "tps", "latency"):
        for stat in ("mean", "p90"):
            iv = level.interval(metric, stat)
            assert iv is not None and iv.n == 60 and iv.method == "percentile bootstrap"
            assert iv.estimate == level.value(metric, stat)
            assert iv.low <= iv.estimate <= iv.high
    # TPS "p90" is the low tail, and its interval sits under the mean's.
    assert level.interval("tps", "p90").high <= level.interval("tps", "mean").high
    assert level_from(60) == level  # seeded: the same records give the same summary


def test_intervals_in_json_not_csv_and_old_runs_still_load(tmp_path):
    write_summaries(tmp_path, [level_from(30)])
    with (tmp_path / "summary.csv").open() as handle:
        assert next(csv.reader(handle)) == list(SUMMARY_COLUMNS)
    assert "intervals" not in SUMMARY_COLUMNS
    (loaded,) = load_summaries(tmp_path)
    assert loaded.interval("ttft", "p90") == level_from(30).interval("ttft", "p90")
    rows = json.loads((tmp_path / "summary.json").read_text())
    del rows[0]["intervals"]
    (tmp_path / "summary.json").write_text(json.dumps(rows))
    (old,) = load_summaries(tmp_path)
    assert old.intervals is None and old.ttft_p90_ms == loaded.ttft_p90_ms


def test_too_few_samples_warned_beside_the_verdict():
    plan = plan_levels([level_from(12)], SLO(ttft_ms=1000, tps=1), kind_of)
    (verdict,) = plan.levels
    assert verdict.warnings == ["P90 from only 12 successful requests (want >= 20)"]
    assert plan_levels([level_from(12)], SLO(statistic="mean"), kind_of).levels[0].warnings == []
    assert plan_levels([level_from(25)], SLO(), kind_of).levels[0].warnings == []


def ci_level(c, low, est, high, tps=50.0, error_rate=0.0):
    def iv(a, e, b):
        return IntervalSummary(estimate=e, low=a, high=b, confidence=0.95, n=100,
                               resamples=1000, method="percentile bootstrap")
    return LevelSummary(
        concurrency=c, ttft_p90_ms=est, tps_p90=tps, latency_mean_s=2.0, n_ok=100,
        error_rate=error_rate,
        intervals={"ttft": {"p90": iv(low, est, high)}, "tps": {"p90": iv(tps, tps, tps)}},
    )


def test_verdicts_pass_fail_undecided_and_the_bracket():
    slo = SLO(ttft_ms=1000, tps=10, think_time_s=18)
    levels = [ci_level(8, 300, 400, 500), ci_level(16, 800, 950, 1100),
              ci_level(32, 1200, 1500, 1900), ci_level(64, 2000, 2500, 3000)]
    plan = plan_levels(levels, slo, kind_of)
    assert [v.verdict for v in plan.levels] == ["pass", "undecided", "fail", "fail"]
    assert [v.ttft_ci for v in plan.levels][1] == [800, 1100]
    assert plan.c_max == 16 and plan.below == 8 and plan.above == 32
    assert plan.binding == ["ttft"]
    assert plan.verdict_at_c_max == "undecided" and plan.verdict_above == "fail"
    assert plan.users == round(16 * (1 + 18 / 2.0))  # C_max keeps DESIGN's point rule


def test_failed_requests_bind_as_errors():
    slo = SLO(ttft_ms=1000, tps=10)
    plan = plan_levels([ci_level(1, 1, 2, 3), ci_level(2, 1, 2, 3, error_rate=0.1)], slo, kind_of)
    assert plan.c_max == 1 and plan.above == 2 and plan.binding == ["errors"]
    assert plan.levels[1].verdict == "fail"


def test_old_summary_gets_point_verdicts_without_intervals():
    old = LevelSummary(concurrency=4, ttft_p90_ms=900, tps_p90=20, latency_mean_s=1.0)
    (verdict,) = plan_levels([old], SLO(ttft_ms=1000, tps=10), kind_of).levels
    assert verdict.verdict == "pass" and verdict.ttft_ci is None and verdict.tps_ci is None


def make_run(root, levels):
    run = root / "r1"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"name": "r1", "source": "measured"}))
    write_summaries(run, levels)
    return run


def test_plan_json_keeps_its_shape_and_adds_uncertainty(tmp_path):
    run = make_run(tmp_path, [level_from(30, seed=2)])
    result = CliRunner().invoke(app, ["plan", str(run), "--format", "json",
                                      "--ttft-slo-ms", "1000", "--tps-slo", "1"])
    assert result.exit_code == 0, result.output
    (item,) = json.loads(result.output)["runs"]
    assert {"name", "c_max", "latency_mean_s", "users", "levels"} <= set(item)
    assert item["c_max"] == 4 and item["below"] is None and item["above"] is None
    (lv,) = item["levels"]
    assert lv["concurrency"] == 4 and lv["ttft_ok"] and lv["verdict"] == "pass"
    assert set(lv["intervals"]) == {"ttft", "tps", "latency"}
    assert set(lv["intervals"]["latency"]) == {"mean", "p90"}
    assert lv["intervals"]["ttft"]["p90"]["low"] == lv["ttft_ci"][0]
    table = CliRunner().invoke(app, ["plan", str(run)])
    assert table.exit_code == 0 and "pass (TTFT [" in table.output


def test_plan_runs_from_disk_matches_summary(tmp_path):
    run = make_run(tmp_path, [level_from(30)])
    report = plan_runs(load_runs([run]), SLO())
    assert report.runs[0].levels[0]["intervals"]["tps"]["mean"]["n"] == 30


def test_report_shows_intervals_verdicts_and_bracket(tmp_path):
    from servecap.api.stored.report import ReportOptions, build_report
    from servecap.report.markdown import render_markdown
    from servecap.report.uncertainty import uncertainty_tables

    root = tmp_path / "runs"
    root.mkdir()
    make_run(root, [level_from(12, seed=3), summarise_level(
        8, [record(i, 3000, 3400) for i in range(30)])])
    model = build_report(load_runs([root]), ReportOptions(title="u"))
    bracket, intervals = uncertainty_tables(model)[:2]
    assert bracket.title == "C_max bracket (P90)"
    assert bracket.rows == [["r1", "4", "none", "8", "ttft, tps", "pass", "fail"]]
    low4, low8 = intervals.rows
    assert low4[-1] == "P90 from only 12 successful requests (want >= 20)"
    assert low4[3].count("[") == 1 and low4[-2].endswith("-> pass")
    assert low8[-2] == "fail / fail -> fail"
    assert "C\\_max bracket \\(P90\\)" in render_markdown(model)
