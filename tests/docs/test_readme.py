"""The README stays a short front door: two set-up commands first, no dated logs, live links."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")

SETUP = (
    "pip install -e '.[all]' && servecap demo\n"
    "pip install -e '.[dev]' && python -m pytest -n 3 -m 'not alone' && python -m pytest -m "
    "alone\n"
)


def test_the_readme_is_short_and_opens_with_the_two_commands() -> None:
    assert len(README.splitlines()) <= 200
    first_block = README.split("```bash\n", 1)[1].split("```", 1)[0]
    assert first_block == SETUP


def test_the_readme_holds_no_dated_measurement() -> None:
    # dated evidence lives in docs/validation/, each record with its date and machine
    assert re.findall(r"\b20\d\d-\d\d-\d\d\b", README) == []
    assert "Measured on" not in README


def test_every_relative_link_in_the_readme_exists() -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [link for link in links if "://" not in link]
    assert local, "the README links into docs/"
    assert [link for link in local if not (ROOT / link).exists()] == []
