"""``servecap sim``: listing, bad input (exit 2, one line, no traceback), calibrate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from servecap.sim import cli as sim_cli
from servecap.sim.cli import sim_app
from servecap.sim.profiles import load_profile_file

runner = CliRunner()


def test_profiles_lists_builtins() -> None:
    res = runner.invoke(sim_app, ["profiles"])
    assert res.exit_code == 0
    assert "deterministic" in res.output and "sglang-spec" in res.output


@pytest.mark.parametrize(
    "args",
    [
        ["--profile", "nope"],
        ["serve", "--profile", "nope"],
        ["serve", "--profile", "deterministic", "--time-scale", "0"],
        ["serve", "--profile", "deterministic", "--port", "70000"],
        ["calibrate", "/nonexistent/summary.json", "--out", "p.toml"],
        ["calibrate", "x.json", "--out", "p.yaml"],
        ["--port", "1", "profiles"],  # a serving option before a subcommand that never serves
    ],
)
def test_bad_input_exits_2_with_one_line(args: list[str]) -> None:
    res = runner.invoke(sim_app, args)
    assert res.exit_code == 2
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1
    assert "Traceback" not in res.output


def test_options_before_serve_are_served(monkeypatch: pytest.MonkeyPatch) -> None:
    """`sim --profile X serve` serves X (it used to serve the default profile silently)."""
    seen: list[tuple[object, ...]] = []
    monkeypatch.setattr(sim_cli, "_serve", lambda *args: seen.append(args))
    res = runner.invoke(sim_app, ["--profile", "sglang-spec", "--time-scale", "4", "serve"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(sim_app, ["--profile", "sglang-spec", "serve", "--profile", "vllm-spec"])
    assert res.exit_code == 0, res.output
    assert [(a[0], a[3]) for a in seen] == [("sglang-spec", 4.0), ("vllm-spec", 1.0)]


def test_calibrate_needs_config_for_multi_config_csv(tmp_path: Path) -> None:
    csv = tmp_path / "a.csv"
    csv.write_text("config,concurrency,ttft_mean_ms\na,1,50\nb,1,60\n")
    res = runner.invoke(sim_app, ["calibrate", str(csv), "--out", str(tmp_path / "p.toml")])
    assert res.exit_code == 2 and "--config" in res.stderr
    res = runner.invoke(
        sim_app, ["calibrate", str(csv), "--out", str(tmp_path / "p.toml"), "--config", "c"]
    )
    assert res.exit_code == 2 and "not in the input" in res.stderr


def test_calibrate_writes_a_profile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from servecap.sim import calibrate

    real_fit = calibrate.fit

    def quick_fit(*args: object, **kwargs: object) -> object:
        return real_fit(*args, **{**kwargs, "free": ["step_base_ms"], "max_evals": 10})  # type: ignore[arg-type]

    monkeypatch.setattr(calibrate, "fit", quick_fit)
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps([{"concurrency": 1, "itl_mean_ms": 12.0},
                                   {"concurrency": 2, "itl_mean_ms": 13.0}]))  # fmt: skip
    out = tmp_path / "mine.toml"
    res = runner.invoke(sim_app, ["calibrate", str(summary), "--out", str(out), "--name", "m"])
    assert res.exit_code == 0, res.output
    assert "wrote" in res.output
    prof = load_profile_file(out)
    assert prof.name == "m" and prof.deployment.engine == "unknown"
    assert sim_cli.load_profile(str(out)) == prof
