"""The prefix-cache flags from the command line against the simulator on 127.0.0.1: a run
with a built hit rate and a reset before each level, then `plan` and `report` show the
prefix-cache table; bad values exit 2 with one message before any load."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servecap.cli.main import app
from servecap.sim.server.runner import SimProcessHandle, start_server_process
from tests.api.test_prefix_cache_run import PROFILE

runner = CliRunner()


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimProcessHandle]:
    path = tmp_path_factory.mktemp("prefix-cli") / "prefix-run.toml"
    path.write_text(PROFILE, encoding="utf-8")
    with start_server_process(str(path)) as handle:
        yield handle


@pytest.mark.slow
def test_run_plan_and_report_show_the_prefix_cache(sim: SimProcessHandle, tmp_path: Path
                                                    ) -> None:
    out = tmp_path / "runs"
    result = runner.invoke(app, [
        "run", "--base-url", sim.base_url, "--concurrency", "2", "--rounds", "5",
        "--input-tokens", "1024", "--output-tokens", "4", "--prefix-hit-rate", "0.6",
        "--reset-prefix-cache", "auto", "--out", str(out), "--metrics-hz", "10",
    ])
    assert result.exit_code == 0, result.output
    assert "prefix cache reset before each level: auto: POST http://127.0.0.1:" in result.output
    assert "prompts built for a prefix-cache hit rate of 0.6 (ideal 0.600)" in result.output
    (run_dir,) = out.iterdir()
    plan = runner.invoke(app, ["plan", str(run_dir)], env={"COLUMNS": "200"})
    assert plan.exit_code == 0, plan.output
    assert "the prefix cache per level" in plan.output and "done" in plan.output
    data = json.loads(runner.invoke(app, ["plan", str(run_dir), "--format", "json"]).output)
    table = data["runs"][0]["prefix_table"]
    assert table["header"][1:5] == ["built for %", "ideal %", "served by usage %",
                                    "served by /metrics %"]
    row = table["rows"][0]
    assert row[1] == "60.0" and row[-1] == "done" and row[-2] == "yes"
    # emptied before the level, the cache misses the prefix on the level's first request
    # (or first two: c=2 may send both before the first is prefilled): 9 or 8 of 10 hit
    assert row[3] == row[4] and float(row[3]) in (53.4, 47.5), row
    (level,) = json.loads((run_dir / "summary.json").read_text())
    assert any(w.startswith(f"prefix hit rate served 0.{row[3][:2]}") for w in level["warnings"])
    report = runner.invoke(app, ["report", str(run_dir), "--out", str(tmp_path / "report")])
    assert report.exit_code == 0, report.output
    html = (tmp_path / "report" / "report.html").read_text()
    assert "the prefix cache per level" in html and "served by /metrics %" in html
    assert "prefix cache per level" in (tmp_path / "report" / "report.md").read_text()


@pytest.mark.parametrize(("flags", "message"), [
    (["--prefix-hit-rate", "1.2"], "--prefix-hit-rate 1.2: expected a fraction in 0..1"),
    (["--prefix-hit-rate", "-0.1"], "--prefix-hit-rate -0.1: expected a fraction in 0..1"),
    (["--prefix-hit-rate", "nan"], "--prefix-hit-rate nan: expected a fraction in 0..1"),
    (["--reset-prefix-cache", "flush"], "--reset-prefix-cache: expected auto, off or the"),
    (["--reset-prefix-cache", "ftp://host/x"], "--reset-prefix-cache: expected auto, off"),
    (["--prefix-hit-rate", "0.5", "--prefix-tokens", "10"], "not both"),
])
@pytest.mark.parametrize("command", ["run", "capacity", "compare"])
def test_bad_prefix_input_exits_2_before_any_load(tmp_path: Path, flags: list[str],
                                                  message: str, command: str) -> None:
    # nothing listens on port 9: a message about the flag proves nothing was sent
    target = (["--target", "a=http://127.0.0.1:9/v1", "--target", "b=http://127.0.0.1:9/v1"]
              if command == "compare"
              else ["--base-url", "http://127.0.0.1:9/v1"])
    result = runner.invoke(app, [command, *target, *flags, "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert message in result.output and "cannot reach" not in result.output
    assert not (tmp_path / "o").exists()


def test_compare_resets_before_each_slot_of_each_target(sim: SimProcessHandle, tmp_path: Path
                                                        ) -> None:
    result = runner.invoke(app, [
        "compare", "--target", f"a={sim.base_url}", "--target", f"b={sim.base_url}",
        "--concurrency", "1,2", "--repeats", "1", "--rounds", "2", "--input-tokens", "512",
        "--output-tokens", "4", "--prefix-hit-rate", "0.5", "--reset-prefix-cache", "auto",
        "--out", str(tmp_path),
    ])
    assert result.exit_code == 0, result.output
    sides = sorted(tmp_path.glob("compare-*/*/run.json"))
    assert len(sides) == 2
    for run_json in sides:
        info = json.loads(run_json.read_text())
        assert info["prefix_cache"]["reset_done"].endswith("(servecap-sim)")
        levels = json.loads((run_json.parent / "summary.json").read_text())
        assert [lv["prefix_cache_reset"] for lv in levels] == ["done", "done"]
        rows = [json.loads(line) for line in
                (run_json.parent / "requests.jsonl").read_text().splitlines()]
        # both targets share one cache here: without the reset before each slot, target b's
        # first request would find a's prefix; with it, each slot's first request misses
        firsts: dict[object, int] = {}
        for row in sorted((r for r in rows if not r["warmup"]), key=lambda r: r["sent_at"]):
            firsts.setdefault(row["concurrency"], row["cached_tokens"])
        assert firsts == {1: 0, 2: 0}, firsts


@pytest.mark.slow
def test_capacity_resets_before_each_probe(sim: SimProcessHandle, tmp_path: Path) -> None:
    result = runner.invoke(app, [
        "capacity", "--base-url", sim.base_url, "--max-concurrency", "2", "--no-verify",
        "--max-time", "60s", "--input-tokens", "256", "--output-tokens", "4",
        "--prefix-hit-rate", "0.5", "--reset-prefix-cache", "auto", "--out", str(tmp_path),
    ])
    assert "C_max" in result.output, result.output  # an answer, whatever its bound
    (summary,) = tmp_path.glob("runs/*/summary.json")
    levels = json.loads(summary.read_text())
    assert [lv["concurrency"] for lv in levels] == [1, 2]
    assert [lv["prefix_cache_reset"] for lv in levels] == ["done", "done"]
    assert all(lv["prefix_hit_target"] == 0.5 for lv in levels)
