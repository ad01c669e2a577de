"""Pure parts of the app: the form, the table rows, the launch command, the run manager."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from servecap.cli.ui_cmd import streamlit_command
from servecap.core.errors import UserInputError
from servecap.core.summary import LevelSummary
from servecap.sim import SimServerHandle
from servecap.ui.form import RunForm, build_config, chosen_levels, deployment_notes, secrets_for
from servecap.ui.run_manager import RunManager
from servecap.ui.shared import parse_app_args
from servecap.ui.tables import level_rows
from servecap.ui.text import plain

pytestmark = pytest.mark.timeout(60)


def test_levels_merge_choices_and_custom() -> None:
    assert chosen_levels(RunForm("http://h/v1", levels=[4, 1], custom_levels="3, 4,96")) == [
        1, 3, 4, 96,
    ]
    with pytest.raises(UserInputError, match="at least one"):
        chosen_levels(RunForm("http://h/v1", levels=[], custom_levels=" "))
    with pytest.raises(UserInputError, match="invalid concurrency level '0'"):
        chosen_levels(RunForm("http://h/v1", levels=[], custom_levels="0"))


def test_build_config_keeps_the_form_and_no_secret(tmp_path: Path) -> None:
    form = RunForm("http://user:pw@127.0.0.1:9/v1/", model="m", levels=[2], rounds=3,
                   name=" r ", engine="vLLM", launch_command="vllm serve m", notes="n")
    config = build_config(form, tmp_path)
    assert config.concurrency == [2] and config.rounds == 3 and config.name == "r"
    assert config.out_dir == str(tmp_path)
    assert config.notes == "engine: vLLM\nlaunch command: vllm serve m\nn"
    assert "pw" not in str(config.stored())
    assert deployment_notes(RunForm("x")) is None


def test_build_config_rejects_bad_numbers(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="rounds"):
        build_config(RunForm("http://h:1/v1", rounds=0), tmp_path)
    with pytest.raises(UserInputError, match="invalid base url"):
        build_config(RunForm("localhost:8000"), tmp_path)


def test_secrets_from_the_password_field_or_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    assert secrets_for(" typed ").api_key == "typed"
    assert secrets_for("").api_key == "from-env"


def test_level_rows_round_and_flag() -> None:
    rows = level_rows([LevelSummary(concurrency=4, n_ok=8, ttft_mean_ms=12.3456,
                                    client_bound=True)])
    assert rows[0]["c"] == 4 and rows[0]["TTFT mean (ms)"] == 12.3
    assert rows[0]["client-bound"] == "yes" and rows[0]["TTFT P90 (ms)"] is None


def test_streamlit_command_is_headless_loopback_without_stats(tmp_path: Path) -> None:
    cmd = streamlit_command(tmp_path, 8600, "127.0.0.1")
    assert cmd[1:4] == ["-m", "streamlit", "run"] and Path(cmd[4]).name == "app.py"
    assert Path(cmd[4]).is_file()
    for flag in ("--server.headless=true", "--server.address=127.0.0.1",
                 "--server.port=8600", "--browser.gatherUsageStats=false"):
        assert flag in cmd
    assert cmd[-2:] == ["--results", str(tmp_path)]
    assert parse_app_args(cmd[cmd.index("--") + 1:]) == tmp_path
    assert parse_app_args([]) == Path("results")


@pytest.mark.slow
def test_manager_runs_in_background_and_refuses_a_second(
    sim: SimServerHandle, tmp_path: Path
) -> None:
    from servecap.api.run.run import Secrets

    manager = RunManager()
    config = build_config(RunForm(sim.base_url, levels=[1], rounds=300, output_tokens=8),
                          tmp_path)
    job = manager.start(config, Secrets())
    assert job.active and manager.current is job
    with pytest.raises(UserInputError, match="already in progress"):
        manager.start(config, Secrets())
    manager.shutdown()
    assert job.state == "cancelled" and job.outcome is not None
    assert job.outcome.info.status == "incomplete"


@pytest.mark.slow
def test_manager_preflight_error_leaves_nothing(tmp_path: Path) -> None:
    from servecap.api.run.run import Secrets

    manager = RunManager()
    config = build_config(RunForm("http://127.0.0.1:9/v1", levels=[1]), tmp_path)
    with pytest.raises(UserInputError, match="cannot reach"):
        manager.start(config, Secrets())
    assert manager.current is None


def test_plain_escapes_every_markdown_construct() -> None:
    hostile = "![x](http://e/p.png) <b>:red[hi]</b> $x$ *a* `c` # h"
    escaped = plain(hostile)
    assert re.sub(r"\\(.)", r"\1", escaped) == hostile
    assert not re.search(r"(?<!\\)[!<>\[\]()`*$:#]", escaped)
