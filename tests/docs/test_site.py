"""The documentation site: it builds strictly, and its reference covers the code.

The expected commands, options and fields are read from the code here, independently of the
generator (`scripts/docs_reference.py`), and looked for in the built HTML: a generator that
dropped an option, or a page that lost its marker, fails these tests.
"""

from __future__ import annotations

import dataclasses
import html
import re
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from servecap.cli.main import app
from servecap.core.records import RequestRecord
from servecap.core.run_info import RunInfo
from servecap.core.summary import LevelSummary

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import docs_reference  # noqa: E402


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def page_text(site: Path, page: str) -> str:
    """A built page's visible text (tags dropped, entities decoded)."""
    raw = (site / page / "index.html").read_text(encoding="utf-8")
    return html.unescape(re.sub(r"<[^>]+>", " ", raw))


def command_sections(site: Path) -> dict[str, str]:
    """The CLI page's text per command section, keyed by the section's anchor."""
    raw = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    parts = re.split(r'<h2 id="([a-z0-9-]+)"', raw)
    return {
        parts[i]: html.unescape(re.sub(r"<[^>]+>", " ", parts[i + 1]))
        for i in range(1, len(parts) - 1, 2)
    }


def expected_options() -> dict[str, list[str]]:
    """Every command of the app (anchor) -> its option and argument names, from click."""
    expected: dict[str, list[str]] = {}

    def walk(name: str, command: object) -> None:
        names: list[str] = []
        for param in command.params:  # type: ignore[attr-defined]
            if getattr(param, "hidden", False):
                continue
            if param.param_type_name == "argument":
                names.append(param.name)
            else:
                names.extend(param.opts + param.secondary_opts)
        expected[name.replace(" ", "-")] = names
        for sub_name, sub in getattr(command, "commands", {}).items():
            if not sub.hidden:
                walk(f"{name} {sub_name}", sub)

    walk("servecap", typer.main.get_command(app))
    return expected


def missing_options(sections: dict[str, str], expected: dict[str, list[str]]) -> list[str]:
    missing = []
    for anchor, names in expected.items():
        text = sections.get(anchor)
        if text is None:
            missing.append(f"{anchor} (no section)")
            continue
        for name in names:
            # a whole word: `--rate` must not be found inside `--rate-shape`
            if not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text):
                missing.append(f"{anchor} {name}")
    return missing


@pytest.mark.slow
def test_every_command_and_option_is_in_the_cli_reference(site: Path) -> None:
    expected = expected_options()
    assert {"servecap-run", "servecap-sim-calibrate", "servecap-verify"} <= set(expected)
    sections = command_sections(site)
    # the same commands, no more: a site built from other code (an installed copy) differs
    assert set(sections) == set(expected)
    assert missing_options(sections, expected) == []


def test_every_commands_examples_are_in_the_cli_reference(site: Path) -> None:
    from servecap.cli.examples import EXAMPLES

    raw = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    # the highlighter splits a line into spans: drop the tags without adding space
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", raw)).split())
    for name, lines in EXAMPLES.items():
        assert all(" ".join(line.split()) in text for line in lines), name


def test_the_option_check_names_what_a_page_lacks(site: Path) -> None:
    sections = command_sections(site)
    sections["servecap-run"] = sections["servecap-run"].replace("--find-cmax", "")
    del sections["servecap-kinds"]
    missing = missing_options(sections, expected_options())
    assert "servecap-run --find-cmax" in missing
    assert "servecap-kinds (no section)" in missing


def test_every_summary_field_is_in_the_site_and_described(site: Path) -> None:
    text = page_text(site, "reference/summary-fields")
    absent = [name for name in LevelSummary.model_fields if f" {name} " not in text]
    assert absent == []
    assert docs_reference.undescribed_summary_fields() == []
    assert "(not described yet)" not in text


def test_every_run_file_field_is_in_the_site(site: Path) -> None:
    text = page_text(site, "reference/run-files")
    names = [*RunInfo.model_fields, *(f.name for f in dataclasses.fields(RequestRecord))]
    assert [name for name in names if f" {name} " not in text] == []
    for file in ("run.json", "requests.jsonl", "summary.json", "summary.csv",
                 "server_metrics.jsonl", "verification.json"):
        assert file in text


def test_a_new_field_without_a_description_is_named() -> None:
    assert docs_reference.describe_summary_field("ttft_p90_ms") is not None
    assert docs_reference.describe_summary_field("a_field_nobody_described") is None
