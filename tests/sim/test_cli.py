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
        ["serve", "--profile", "deterministic", "--tool-call-probability", "1.5"],
        ["--profile", "deterministic", "--tool-call-probability", "-0.1"],
        ["calibrate", "/nonexistent/summary.json", "--out", "p.toml"],
        ["calibrate", "x.json", "--out", "p.yaml"],
        ["calibrate", "x.json", "--out", "p.toml", "--engine", "vllm"],
        ["calibrate", "x.json", "--out", "p.toml", "--engine", "llama.cpp", "--base", "vllm-spec"],
        ["calibrate", "x.json", "--out", "p.toml", "--ttft-slo-ms", "0"],
        ["calibrate", "x.json", "--out", "p.toml", "--ttft-slo-ms", "nan"],
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


def test_the_tool_call_probability_reaches_the_served_profile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    served: list[object] = []
    monkeypatch.setattr("servecap.sim.server.runner.serve",
                        lambda profile, **_: served.append(profile))
    res = runner.invoke(sim_app, ["--tool-call-probability", "0.25", "serve",
                                  "--profile", "deterministic"])
    assert res.exit_code == 0, res.output
    assert [getattr(p, "tool_call_probability", None) for p in served] == [0.25]


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
    from servecap.sim.calibration import calibrate

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


@pytest.mark.slow
def test_calibrate_for_llama_cpp_fits_where_decoding_stops_growing(tmp_path: Path) -> None:
    """`--engine llama.cpp`: llama-server's base (its slots from --max-num-seqs, no frontend
    spread) with the decode cap fitted: levels whose ITL stops growing past c=4 are fitted
    closer than the generic base's power law can (the measured ITLs of the engine proof on
    this repository's CI machine: 1.7, 7.2 and 8.2 ms at c = 1, 4, 8)."""
    rows = [{"concurrency": c, "ttft_mean_ms": t, "itl_mean_ms": i, "tps_mean": 1000.0 / i,
             "latency_mean_s": (t + 127 * i) / 1000.0}
            for c, t, i in ((1, 56.0, 1.7), (4, 198.0, 7.2), (8, 402.0, 8.2))]  # fmt: skip
    runs = _summary(tmp_path / "run", rows)
    errors = {}
    for engine in ("generic", "llama.cpp"):
        out = tmp_path / f"{engine}.toml"
        res = runner.invoke(sim_app, ["calibrate", str(runs), "--out", str(out),
                                      "--max-num-seqs", "8", "--engine", engine])  # fmt: skip
        assert res.exit_code == 0, res.output
        prof = load_profile_file(out)
        errors[engine] = float(prof.calibration["mape"])
    assert prof.deployment.engine == "llama.cpp" and prof.params.frontend_jitter == 0.0
    assert "decode_batch_cap" in str(prof.calibration["fitted"])
    assert 1.0 <= prof.params.decode_batch_cap < 8.0
    assert errors["llama.cpp"] < errors["generic"]


def _summary(folder: Path, rows: list[dict[str, float]]) -> Path:
    folder.mkdir()
    (folder / "summary.json").write_text(json.dumps(rows))
    return folder


@pytest.mark.slow
def test_calibrate_fits_several_runs_as_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two runs of other lengths make one profile; the profile says both workloads."""
    from servecap.sim.calibration import calibrate

    real_fit = calibrate.fit

    def quick_fit(*args: object, **kwargs: object) -> object:
        return real_fit(*args, **{**kwargs, "free": ["step_base_ms"], "max_evals": 10})  # type: ignore[arg-type]

    monkeypatch.setattr(calibrate, "fit", quick_fit)
    short = _summary(tmp_path / "short", [
        {"concurrency": c, "itl_mean_ms": 12.0 + c, "input_tokens_sent_mean": 128.0,
         "output_tokens_sent_mean": 128.0} for c in (1, 2, 4)])  # fmt: skip
    long = _summary(tmp_path / "long", [
        {"concurrency": 1, "itl_mean_ms": 15.0, "input_tokens_sent_mean": 512.0,
         "output_tokens_sent_mean": 32.0}])  # fmt: skip
    out = tmp_path / "mine.toml"
    res = runner.invoke(sim_app, ["calibrate", str(short), str(long), "--out", str(out)])
    assert res.exit_code == 0, res.output
    cal = load_profile_file(out).calibration
    assert cal["sweep"] == ("closed loop, 10 rounds, 128 input / 128 output tokens and "
                            "512 input / 32 output tokens")  # fmt: skip
    assert cal["holdout_split"] == "fit on c=1,4; predicted c=2 (128/128; the fit also saw 512/32)"
    assert cal["source"] == f"{short} {long}" and load_profile_file(out).name == "short"


def test_calibrate_refuses_a_level_given_twice(tmp_path: Path) -> None:
    rows = [{"concurrency": 1, "itl_mean_ms": 12.0}]
    one, two = _summary(tmp_path / "one", rows), _summary(tmp_path / "two", rows)
    res = runner.invoke(
        sim_app, ["calibrate", str(one), str(two), "--out", str(tmp_path / "p.toml")]
    )
    assert res.exit_code == 2 and res.stderr.count("\n") == 1
    assert "c=1 at 128/128 is in both" in res.stderr


def test_calibrate_refuses_an_unwritable_out_before_fitting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fit can take minutes: an --out that cannot be written fails before it, not after
    (it used to fit, then say "cannot write")."""
    from servecap.sim.calibration import calibrate

    def no_fit(*args: object, **kwargs: object) -> object:
        raise AssertionError("fitted before checking --out")

    monkeypatch.setattr(calibrate, "fit", no_fit)
    summary = _summary(tmp_path / "run", [{"concurrency": 1, "itl_mean_ms": 12.0}])
    (tmp_path / "a-file").write_text("")
    (tmp_path / "a-folder.toml").mkdir()
    for out, needle in ((tmp_path / "a-file" / "p.toml", "is not a directory"),
                        (tmp_path / "a-folder.toml", "must be a .toml file")):  # fmt: skip
        res = runner.invoke(sim_app, ["calibrate", str(summary), "--out", str(out)])
        assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
        assert needle in res.stderr


def test_calibrate_makes_the_out_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from servecap.sim.calibration import calibrate

    real_fit = calibrate.fit

    def quick_fit(*args: object, **kwargs: object) -> object:
        return real_fit(*args, **{**kwargs, "free": ["step_base_ms"], "max_evals": 5})  # type: ignore[arg-type]

    monkeypatch.setattr(calibrate, "fit", quick_fit)
    summary = _summary(tmp_path / "run", [{"concurrency": 1, "itl_mean_ms": 12.0}])
    out = tmp_path / "profiles" / "new" / "p.toml"
    res = runner.invoke(sim_app, ["calibrate", str(summary), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert load_profile_file(out).calibration["mape"] is not None
    assert sorted(p.name for p in out.parent.iterdir()) == ["p.toml"]  # no probe left behind


def test_calibrate_guards_the_user_s_ttft_objective(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--ttft-slo-ms`: the fit's side penalty is at the user's objective, and the profile
    says which (its `[calibration]` and the command in its header)."""
    from servecap.sim.calibration import calibrate

    real_fit, guards = calibrate.fit, []

    def quick_fit(*args: object, **kwargs: object) -> object:
        guards.append(kwargs["guard"])
        return real_fit(*args, **{**kwargs, "free": ["step_base_ms"], "max_evals": 5})  # type: ignore[arg-type]

    monkeypatch.setattr(calibrate, "fit", quick_fit)
    summary = _summary(
        tmp_path / "run", [{"concurrency": 1, "itl_mean_ms": 12.0, "ttft_p90_ms": 450.0}]
    )
    for flags, objective in (([], 1000.0), (["--ttft-slo-ms", "600"], 600.0)):
        out = tmp_path / f"p{len(flags)}.toml"
        res = runner.invoke(sim_app, ["calibrate", str(summary), "--out", str(out), *flags])
        assert res.exit_code == 0, res.output
        assert guards[-1].ttft_ms == objective
        assert load_profile_file(out).calibration["slo_ttft_ms"] == objective
        header = out.read_text().splitlines()[1]
        assert header.endswith("--ttft-slo-ms 600") == bool(flags)
