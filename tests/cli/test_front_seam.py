"""What the front ends share: flags named in messages, defaults from the config models, one
line and exit 2 for every bad input, help without type labels, runs and models through api."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel, Field, ValidationError
from typer.testing import CliRunner

from servecap.api.run.run_config import RunConfig
from servecap.cli.common import SLO_DEFAULTS, StatChoice
from servecap.cli.main import app
from servecap.cli.run_cmd import RUN_FLAGS
from servecap.core.config import SLO, ClientOptions, Statistic, parse_levels
from servecap.core.errors import UserInputError
from servecap.core.numbers import MISSING, fmt_number
from servecap.core.validation import first_problem, user_input_error
from servecap.ui.form import RunForm, fetch_models, secrets_for
from tests.faults.runs import invoke
from tests.servers.fault_server import FaultServer, FaultServerThread

runner = CliRunner()
SRC = Path(__file__).resolve().parents[2] / "src"


def one_error_line(result_stderr: str) -> str:
    lines = [line for line in result_stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result_stderr
    return lines[0]


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--rounds", "0"), ("--output-tokens", "0"), ("--input-tokens", "-1"),
     ("--timeout", "0"), ("--stall-timeout", "-1"), ("--connect-timeout", "0")],
)
def test_a_bad_number_names_its_flag_not_the_field(flag: str, value: str, tmp_path: Path) -> None:
    result = invoke(["run", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path),
                     flag, value])
    assert result.exit_code == 2
    line = one_error_line(result.stderr)
    assert line.startswith(f"error: invalid {flag}: "), line
    assert "_" not in line.split(":")[1], line  # no internal field name such as output_tokens


@pytest.mark.parametrize("levels", ["1,,2", "1,2,", ",4", " , "])
def test_an_empty_concurrency_level_is_refused(levels: str, tmp_path: Path) -> None:
    server = FaultServer()
    with FaultServerThread(server) as thread:
        result = invoke(["run", "--base-url", thread.base_url, "--out", str(tmp_path),
                         "--concurrency", levels])
    assert result.exit_code == 2
    assert "--concurrency" in one_error_line(result.stderr)
    assert server.completions == 0


def test_parse_levels_still_reads_spaced_lists() -> None:
    assert parse_levels(" 4, 1 ,2,2") == [1, 2, 4]
    with pytest.raises(UserInputError, match="empty level"):
        parse_levels("1,,2")


def test_a_base_url_without_v1_gets_a_hint(tmp_path: Path) -> None:
    with FaultServerThread(FaultServer()) as thread:
        root = thread.base_url.removesuffix("/v1")
        result = invoke(["run", "--base-url", root, "--out", str(tmp_path)])
        right = invoke(["run", "--base-url", thread.base_url + "/nope/v1", "--out",
                        str(tmp_path)])
    line = one_error_line(result.stderr)
    assert result.exit_code == 2
    assert "HTTP 404" in line and f"did you mean {root}/v1?" in line, line
    # a base URL that does end in /v1 gets no hint: the server is wrong, not the path
    assert right.exit_code == 2 and "did you mean" not in one_error_line(right.stderr)


@pytest.mark.parametrize(
    "command",
    [["run"], ["plan"], ["show"], ["report"], ["import-summary"], ["demo"], ["ui"],
     ["sim"], ["sim", "serve"], ["sim", "calibrate"], ["sim", "profiles"], []],
)
def test_help_shows_no_type_labels(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    assert "--help" in result.output
    labels = re.findall(r"<[a-zA-Z_]+(?:\[[^\]]*\])?>", result.output)
    assert labels == [], labels


@pytest.mark.slow
def test_a_value_typer_rejects_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # a subprocess, as a user runs it: typer's framed usage panel would be several lines
    cases = [(["plan", str(tmp_path), "--stat", "p99"], "'--stat'"),
             (["run", "--rounds", "abc"], "'--rounds'"),
             (["plan", str(tmp_path), "--bogus"], "--bogus"), (["rnu"], "'run'")]
    for args, needle in cases:
        done = subprocess.run(
            [sys.executable, "-c", "from servecap.cli.main import app; app()", *args],
            capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(SRC),
                                                           "COLUMNS": "80"},
        )
        assert done.returncode == 2, (args, done.stderr)
        line = one_error_line(done.stderr)
        assert "Traceback" not in done.stderr
        assert needle in line, line


def test_stat_is_a_typed_choice_of_the_slo_statistics() -> None:
    from typing import get_args

    assert {c.value for c in StatChoice} == set(get_args(Statistic))
    assert StatChoice(SLO_DEFAULTS.statistic) is StatChoice.p90


def test_cli_and_app_defaults_are_the_config_models() -> None:
    from servecap.cli import plan_cmd, report_cmd, run_cmd

    def defaults(func: object) -> dict[str, object]:
        import inspect

        return {n: p.default for n, p in inspect.signature(func).parameters.items()}  # type: ignore[arg-type]

    slo = SLO()
    for command in (plan_cmd.plan, report_cmd.report):
        got = defaults(command)
        assert (got["ttft_slo_ms"], got["tps_slo"], got["think_time_s"]) == (
            slo.ttft_ms, slo.tps, slo.think_time_s)
        assert got["stat"] == StatChoice(slo.statistic)
    run, client, got = RunConfig(), ClientOptions(), defaults(run_cmd.run)
    # the length flags take a spec (`N` or a distribution), so their default is N as text
    assert (got["rounds"], got["input_tokens"], got["output_tokens"], got["warmup"]) == (
        run.rounds, str(run.input_tokens), str(run.output_tokens), run.warmup)
    assert (got["timeout"], got["stall_timeout"], got["connect_timeout"]) == (
        client.timeout_s, client.stall_timeout_s, client.connect_timeout_s)
    # None means "not given" (so --users can refuse it); run_cmd then applies the config's
    # default levels, which the flag's help names.
    assert got["concurrency"] is None
    assert run_cmd.RUN.concurrency == run.concurrency
    assert got["base_url"] == client.base_url and got["out"] == Path(run.out_dir)
    form = RunForm(base_url="")
    assert (form.rounds, form.input_tokens, form.output_tokens) == (
        run.rounds, run.input_tokens, run.output_tokens)


def test_every_run_config_field_has_a_flag_name() -> None:
    fields = {f for f in RunConfig.model_fields if f != "client"}
    fields |= {f"client.{f}" for f in ClientOptions.model_fields}
    assert fields == set(RUN_FLAGS)


class _Doc(BaseModel):
    rounds: int = Field(ge=1)
    tps: float = Field(ge=0)


def test_the_validation_helper_names_and_counts_without_echoing() -> None:
    with pytest.raises(ValidationError) as caught:
        _Doc(rounds=0, tps=-1.0)
    assert first_problem(caught.value).startswith("rounds: ")
    assert first_problem(caught.value).endswith("(and 1 more)")
    err = user_input_error(caught.value, {"rounds": "--rounds"})
    assert isinstance(err, UserInputError) and str(err).startswith("invalid --rounds: ")
    with pytest.raises(ValidationError) as secret:
        _Doc(rounds="sk-secret-value", tps=1.0)  # type: ignore[arg-type]
    assert "sk-secret" not in first_problem(secret.value)


def test_one_missing_text_for_numbers() -> None:
    assert [fmt_number(None), fmt_number(float("nan")), fmt_number(16), fmt_number(1.234, 1)] \
        == [MISSING, MISSING, "16", "1.2"]


def test_the_apps_model_list_goes_through_api() -> None:
    with FaultServerThread(FaultServer(models=["a", "b"])) as thread:
        assert fetch_models(thread.base_url, secrets_for("")) == ["a", "b"]
        with pytest.raises(UserInputError, match="did you mean"):
            fetch_models(thread.base_url.removesuffix("/v1"), secrets_for(""))


def test_pytest_asyncio_finds_its_loop_scopes_set(request: pytest.FixtureRequest) -> None:
    """The plugin's own configure step, on this suite's settings, warns nothing (unset, it
    warns a PytestDeprecationWarning that the fixture loop scope's default will change)."""
    import warnings

    from pytest_asyncio import plugin

    class _SuiteConfig:
        def getini(self, name: str) -> object:
            return request.config.getini(name)

        def addinivalue_line(self, name: str, line: str) -> None:
            pass

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plugin.pytest_configure(_SuiteConfig())  # type: ignore[arg-type]
    assert [str(w.message)[:60] for w in caught] == []
    assert request.config.getini("asyncio_default_fixture_loop_scope") == "function"
