"""Server text in a terminal: Rich markup in a model id is shown, never interpreted (it used
to crash `run`, `show` and `plan`); ESC/OSC sequences never reach the terminal or report.md;
an odd `/version` body is data, not a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.runs import invoke, invoke_report, only_run_dir, run_args, run_info
from tests.servers.fault_server import FaultServer, FaultServerThread

pytestmark = pytest.mark.slow  # each case runs a sweep

ESCAPES = "\x1b]0;pwned\x07\x1b[31mred\x1b[0m\x9b2J"


def _run(tmp_path: Path, model: str, version: dict | None = None) -> tuple[Path, str]:
    server = FaultServer(models=[model], version=version)
    out = tmp_path / "out"
    with FaultServerThread(server) as thread:
        ran = invoke(run_args(thread.base_url, out))
    assert ran.exception is None, repr(ran.exception)
    assert ran.exit_code == 0, ran.stderr
    return out, ran.stdout + ran.stderr


@pytest.mark.parametrize("model", ["x[/]", "[/]x[bold]", "[link=http://evil]y[/link]"])
def test_markup_in_a_model_id_is_text(model: str, tmp_path: Path) -> None:
    out, said = _run(tmp_path, model)
    assert model in said  # shown as it is
    for command in (["show", str(out)], ["plan", str(out)]):
        shown = invoke(command)
        assert shown.exception is None and shown.exit_code == 0, (command, shown.stderr)
        assert model in shown.stdout


@pytest.mark.filterwarnings("error::UserWarning")  # a control character in a PNG label
def test_terminal_escapes_never_reach_terminal_or_markdown(tmp_path: Path) -> None:
    model = f"evil{ESCAPES}"
    out, said = _run(tmp_path, model)
    shown = invoke(["show", str(out)])
    planned = invoke(["plan", str(out)])
    reported = invoke_report([str(out), "--out", str(tmp_path / "report")])
    assert reported.exit_code == 0, reported.stderr
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    for name, text in {"run": said, "show": shown.stdout + shown.stderr,
                       "plan": planned.stdout + planned.stderr, "report.md": markdown}.items():
        assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text, name
    assert "\\x1b" in shown.stdout  # escaped, so still visible


@pytest.mark.parametrize(("version", "ignored"), [
    ({"deployment": "abc"}, "deployment"),
    ({"deployment": [1, 2, 3]}, "deployment"),
    ({"time_scale": "fast"}, "time_scale"),
    ({"time_scale": -1, "deployment": {"tp": 2}}, "time_scale"),
])
def test_odd_version_bodies_are_data(version: dict, ignored: str, tmp_path: Path) -> None:
    out, _ = _run(tmp_path, "m", version)
    info = run_info(only_run_dir(out))
    assert any(ignored in note for note in info["notes"]), info["notes"]
    if isinstance(version.get("deployment"), dict):
        assert info["deployment"] == version["deployment"]  # what parses is kept
    shown = invoke(["show", str(out)])
    assert ignored in shown.stdout


RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e", "\u2066")


def _raw_controls(root: Path) -> list[str]:
    from tests.security.artifacts import artifact_texts

    hits = []
    for name, data in artifact_texts(root):
        if name.endswith((".png", ".zip")):
            continue  # binary (a ZIP's text members are read one by one)
        text = data.decode("utf-8", errors="ignore")
        hits += [f"{name}: {c!r}" for c in RAW_CONTROLS if c in text]
    return hits


def test_control_characters_reach_no_file(tmp_path: Path) -> None:
    """ESC, C1 and bidi overrides from a model id, an error body and /version: escaped in
    every file a run and its report write (HTML, CSV, JSON, the ZIP's members)."""
    hostile = f"m{ESCAPES}\u202egnp.exe\u2066"
    server = FaultServer(queue=["ok", "http_500", "ok"], models=[hostile],
                         version={"version": hostile, hostile: "key"})
    out = tmp_path / "out"
    with FaultServerThread(server) as thread:
        ran = invoke(run_args(thread.base_url, out))
    assert ran.exit_code == 0, ran.stderr
    reported = invoke_report([str(out), "--out", str(tmp_path / "report")])
    assert reported.exit_code == 0, reported.stderr
    assert _raw_controls(tmp_path) == []
    assert "\\u202e" in (only_run_dir(out) / "run.json").read_text()  # kept, visibly
