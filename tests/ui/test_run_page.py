"""The Run page through Streamlit's AppTest: validation, a live run, cancel, reattach."""

from __future__ import annotations

import re
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from servecap.sim import SimServerHandle
from tests.ui.conftest import wait_for

pytestmark = pytest.mark.timeout(120)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def errors(at: Any) -> list[str]:
    """Alert bodies with the Markdown escapes the app adds to literal text removed."""
    return [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]


def start(at: Any, url: str, levels: list[int], custom: str = "", rounds: int = 2) -> Any:
    at.text_input(key="base_url").set_value(url)
    at.multiselect(key="levels").set_value(levels)
    at.text_input(key="custom_levels").set_value(custom)
    at.number_input(key="rounds").set_value(rounds)
    at.number_input(key="output_tokens").set_value(8)
    at.number_input(key="input_tokens").set_value(16)
    return at.button(key="start_run").click().run()


def manager_job() -> Any:
    from servecap.ui.shared import run_manager

    return run_manager().current


def poll_until_done(at: Any, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while manager_job() is not None and manager_job().active:
        assert time.monotonic() < deadline, "run did not finish"
        time.sleep(0.2)  # poll
    return at.run()


@pytest.mark.slow
def test_try_it_states_its_time_scale_and_runs_the_load_in_a_child(
    app_factory: Any, tmp_path: Path
) -> None:
    import json
    import os

    at = app_factory(tmp_path)
    button = at.button(key="try_it")
    assert "(real time (x1))" in button.label  # the scale, before anything starts
    at = button.click().run()
    shown = [re.sub(r"\\(.)", r"\1", s.value) for s in at.success]
    assert any("at real time (x1)" in text for text in shown), shown
    at.multiselect(key="levels").set_value([1])
    at.number_input(key="rounds").set_value(2)
    at.number_input(key="output_tokens").set_value(8)
    at = at.button(key="start_run").click().run()
    job = manager_job()
    assert job is not None
    poll_until_done(at, timeout=90)
    assert job.state == "done", job.error
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    writer = json.loads((run_dir / "run.json").read_text())["pid"]
    assert writer == job.pid and writer != os.getpid()  # the load left the app's process
    assert [lv.key.value for lv in job.outcome.levels] == [1]


def test_form_fields_and_password_key(app_factory: Any, tmp_path: Path) -> None:
    at = app_factory(tmp_path)
    assert not at.exception
    labels = [t.label for t in at.text_input]
    for label in ("Base URL", "API key", "Custom levels", "Run name", "Engine", "Launch command"):
        assert label in labels
    assert at.text_input(key="api_key").proto.type == 1  # PASSWORD
    assert at.multiselect(key="levels").value == [1, 2, 4, 8]
    assert at.multiselect(key="levels").options == ["1", "2", "4", "8", "16", "32", "64"]


@pytest.mark.parametrize(
    ("url", "levels", "custom", "message"),
    [
        ("ftp://example.com/v1", [1], "", "invalid 'Base URL'"),  # its label, not a flag
        ("", [1], "", "enter the server's base URL"),
        ("http://127.0.0.1:8000/v1", [], "", "at least one concurrency level"),
        ("http://127.0.0.1:8000/v1", [], "2, x", "invalid 'Concurrency levels' level 'x'"),
    ],
)
def test_bad_input_shows_message_and_starts_nothing(
    app_factory: Any, tmp_path: Path, url: str, levels: list[int], custom: str, message: str
) -> None:
    at = start(app_factory(tmp_path), url, levels, custom)
    assert not at.exception
    assert any(message in e for e in errors(at)), errors(at)
    assert manager_job() is None
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
def test_unreachable_server_is_a_clear_message(app_factory: Any, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    at = start(app_factory(tmp_path), url, [1, 2])
    assert any("Not started" in e and "cannot reach server" in e for e in errors(at)), errors(at)
    assert manager_job() is None
    assert not any(p.is_dir() for p in tmp_path.iterdir())
    at.button(key="refresh_models").click().run()
    assert any("cannot reach server" in e for e in errors(at))


@pytest.mark.slow
def test_run_shows_levels_then_results(
    app_factory: Any, tmp_path: Path, sim: SimServerHandle
) -> None:
    at = app_factory(tmp_path)
    at.text_input(key="api_key").set_value("sk-test-never-saved-123")
    at.text_input(key="base_url").set_value(sim.base_url)
    at.button(key="refresh_models").click().run()
    assert "servecap-sim-deterministic" in at.selectbox(key="model").options
    at.text_input(key="run_name").set_value("<b>bold</b> run")
    at.text_input(key="engine").set_value("vLLM 0.9")
    at = start(at, sim.base_url, [1, 2])
    assert not errors(at)
    at = poll_until_done(at)
    assert any("Run complete" in s.value for s in at.success)
    assert any("saved in:" in t.value for t in at.text)
    completed = at.dataframe[-1].value
    assert list(completed["c"]) == [1, 2]
    run_dirs = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert len(run_dirs) == 1
    for path in run_dirs[0].rglob("*"):
        if path.is_file():
            assert "sk-test-never-saved-123" not in path.read_text(errors="replace")
    assert not any("<b>bold</b>" in m.value for m in at.markdown)


@pytest.mark.slow
def test_cancel_keeps_the_run_incomplete(
    app_factory: Any, tmp_path: Path, sim: SimServerHandle
) -> None:
    at = start(app_factory(tmp_path), sim.base_url, [1, 2, 4, 8], rounds=200)
    assert not errors(at)
    job = manager_job()
    wait_for(lambda: job.progress.snapshot().done >= 3)
    at.button(key="cancel_run").click().run()
    assert job.finished.wait(30)
    at = at.run()
    assert job.state == "cancelled"
    assert any("cancelled" in w.value for w in at.warning)
    import json

    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert json.loads((run_dir / "run.json").read_text())["status"] == "incomplete"


@pytest.mark.slow
def test_second_session_reattaches_to_the_running_run(
    app_factory: Any, tmp_path: Path, sim: SimServerHandle
) -> None:
    first = start(app_factory(tmp_path), sim.base_url, [1, 2], rounds=100)
    job = manager_job()
    assert job is not None and job.active
    del first  # the tab closes; the run goes on
    other = app_factory(tmp_path)
    assert any("Running" in i.value for i in other.info)
    assert other.button(key="start_run").disabled
    assert other.button(key="cancel_run") is not None
    job.cancel()
    assert job.finished.wait(30)
