"""Suite-wide hooks: how tests share the workers of a parallel run, and at the end of a run,
which suites were skipped and how to run them.

A plain `pytest` skips the browser tests where Chromium is missing and the engine tests unless
asked for; a green line with a few "s" is easy to misread as "all of it passed".
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

# suite -> the one command that enables it
ENABLE = {
    "browser": "apt-get install -y chromium   (Debian's, at /usr/bin/chromium; playwright "
    "drives it, no browser is downloaded)",
    "engine": "pip install -r tests/engines/requirements.txt && "
    "SERVECAP_ENGINE_TESTS=1 python -m pytest -m engine   (builds llama-server and installs "
    "vLLM for CPU in its own virtualenv on first use)",
}
EVERYTHING = (
    "bash .ci/run   (as CI does: installs Chromium, the engines' dependencies, then runs all)"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every engine test runs `alone` (the parallel test command runs those after its
    bulk: a client that shares the cores reads a real server's timing wrong; the
    mark's other tests carry it themselves).
    Groups for `--dist loadgroup`: a module stays on one worker (its module-scoped servers
    start once), and the engine tests share one, so that engines never compete for the
    cores and their builds and caches are made once, should they run in parallel."""
    for item in items:
        engine = "engine" in item.keywords
        if engine:
            item.add_marker(pytest.mark.alone)
        item.add_marker(pytest.mark.xdist_group("engines" if engine
                                                else item.nodeid.split("::")[0]))


def suite_of(report: Any) -> str:
    """The suite a skipped test belongs to: its heavy mark, else its test directory."""
    keywords = getattr(report, "keywords", {}) or {}
    for mark in ENABLE:
        if mark in keywords:
            return mark
    parts = str(report.nodeid).split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "tests" else str(report.nodeid)


def _reason(report: Any) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return ""


def skipped_suites(reports: list[Any]) -> dict[str, tuple[int, str]]:
    """suite -> (how many tests were skipped, the most common reason)."""
    counts: Counter[str] = Counter()
    reasons: dict[str, Counter[str]] = {}
    for report in reports:
        suite = suite_of(report)
        counts[suite] += 1
        reasons.setdefault(suite, Counter())[_reason(report)] += 1
    return {s: (n, reasons[s].most_common(1)[0][0]) for s, n in counts.items()}


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    suites = skipped_suites(list(terminalreporter.stats.get("skipped", [])))
    if not suites:
        return
    terminalreporter.section("skipped suites")
    for suite, (count, reason) in sorted(suites.items()):
        line = f"{suite}: {count} test(s) skipped ({reason})"
        terminalreporter.write_line(line)
        if suite in ENABLE:
            terminalreporter.write_line(f"    enable: {ENABLE[suite]}")
    terminalreporter.write_line(f"everything: {EVERYTHING}")
