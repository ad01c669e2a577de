"""Tests fail for the right reason: no sleep synchronises a test, no assertion bounds a
wall-clock time from above (a loaded machine would fail it, not a wrong program).

A sleep in tests/ says on its line why it is not a synchronisation: ``# poll`` (a bounded
wait that re-checks a condition: a port, a file, a gauge) or ``# pace`` (the timing of a
fake server or slow client that the test is about). tests/servers/ holds fake servers whose
sleeps are their behaviour. A wall-clock time may be a floor (``elapsed >= ...``: a busy
machine only adds to it), never a ceiling or an approximation; those figures belong in
bench/.
"""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
FAKE_SERVERS = TESTS / "servers"
SLEEP = re.compile(r"\b(?:time|asyncio)\.sleep\((?!0\)|0\.0\))")
TAGGED = re.compile(r"#.*\b(?:poll|pace)\b")
CLOCK = r"(?:elapsed|took)\w*"
CEILING = re.compile(
    rf"assert\b.*(?:\b{CLOCK}\s*(?:<|==\s*pytest\.approx)|(?:>|>=)\s*{CLOCK}\b)"
    r"|assert\b.*(?:perf_counter|monotonic)\(\)(?!\s*<\s*deadline)"
)


def _lines() -> list[tuple[str, int, str]]:
    """(path, line number, text) of every test source line outside the fake servers."""
    out = []
    for path in sorted(TESTS.rglob("*.py")):
        if FAKE_SERVERS in path.parents or path == Path(__file__).resolve():
            continue
        rel = str(path.relative_to(TESTS.parent))
        out += [(rel, n, line) for n, line in enumerate(path.read_text().splitlines(), 1)]
    return out


def test_no_sleep_synchronises_a_test() -> None:
    bare = [f"{p}:{n}: {s.strip()}" for p, n, s in _lines()
            if SLEEP.search(s) and not TAGGED.search(s)]  # fmt: skip
    why = "a sleep used as synchronisation: wait on an event, a port, a file or a log line"
    assert bare == [], why + ":\n" + "\n".join(bare)


def test_no_assertion_puts_a_ceiling_on_wall_clock_time() -> None:
    found = [f"{p}:{n}: {s.strip()}" for p, n, s in _lines() if CEILING.search(s)]
    why = "a wall-clock ceiling in a test (move the figure to bench/)"
    assert found == [], why + ":\n" + "\n".join(found)


def test_the_checks_see_the_forms_they_forbid() -> None:
    assert SLEEP.search("time.sleep(0.2)") and SLEEP.search("await asyncio.sleep(0.05)")
    assert not SLEEP.search("await asyncio.sleep(0)")
    assert TAGGED.search("time.sleep(0.1)  # poll") and not TAGGED.search("time.sleep(0.1)")
    for line in ("assert took < 5", "assert elapsed == pytest.approx(0.12, abs=0.02)",
                 "assert 0.5 > elapsed_s", "assert time.perf_counter() - t0 < 1"):
        assert CEILING.search(line), line
    for line in ("assert elapsed >= 0.12", "assert time.monotonic() < deadline, 'hung'"):
        assert not CEILING.search(line), line
