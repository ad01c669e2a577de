"""The `known-boundary` profile: its steady TTFT is the formula its file derives (C_max = 24
at the seed's SLOs), and `capacity` finds that C_max exactly on a real simulator."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from servecap.sim.model.fixed_engine import FixedEngine
from servecap.sim.profiles import builtin_profile

CLI = [sys.executable, "-m", "servecap.cli.main"]
TOKENS = 128  # the run's default request: 128 tokens in, 128 out
C_MAX = 24  # from the profile's numbers: 200c - 3,900 <= 1,000 ms up to c = 24


def formula_ttft_ms(c: int) -> float:
    """The profile file's steady TTFT at c streams with no client turnaround."""
    return max(300.0, 200.0 * c - 3900.0)


def steady_ttfts_ms(c: int, rounds: int = 6) -> list[float]:
    """A closed loop of c streams on the profile's engine in virtual time (each stream sends
    again the moment its request ends); the TTFTs of the last round."""
    engine = FixedEngine(builtin_profile("known-boundary").params)
    sent: dict[int, float] = {}
    ttft: dict[int, float] = {}
    for rid in range(c):
        sent[rid] = 0.0
        engine.add(rid, TOKENS, TOKENS, 0.0)
    while len(sent) < rounds * c:
        now = engine.next_time()
        assert now is not None
        for em in engine.advance(now):
            if em.first:
                ttft[em.rid] = (now - sent[em.rid]) * 1000.0
            if em.done:
                rid = len(sent)
                sent[rid] = now
                engine.add(rid, TOKENS, TOKENS, now)
    done = sorted(ttft)
    return [ttft[rid] for rid in done[-c:]]


@pytest.mark.parametrize("c", [1, 16, 21, 22, 23, 24, 25, 30])
def test_the_steady_ttft_is_the_profiles_formula(c: int) -> None:
    assert steady_ttfts_ms(c) == pytest.approx([formula_ttft_ms(c)] * c)


def test_the_formula_puts_cmax_at_24() -> None:
    assert max(c for c in range(1, 100) if formula_ttft_ms(c) <= 1000.0) == C_MAX
    # TPS = 128 tokens over a cycle of max(4.2 s, c x 0.2 s): >= 15 well past c = 25
    assert TOKENS / max(4.2, 0.2 * (C_MAX + 1)) >= 15.0


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_capacity_finds_the_computed_cmax(tmp_path: Path) -> None:
    """One search at x10 (counts only: no timing). On a loaded machine the client may lag
    behind the x10 simulator at the first miss, and the answer then says "client_bound"
    (exit 5) beside the same C_max."""
    from tests.api.test_verify import simulator

    with simulator("known-boundary", 10.0, tmp_path / "sim.log") as url:
        done = subprocess.run(
            [*CLI, "capacity", "--base-url", url, "--no-verify", "--out",
             str(tmp_path / "out")], capture_output=True, text=True, timeout=550,
        )
    assert done.returncode in (0, 5), done.stdout + done.stderr[-2000:]
    answer = json.loads((tmp_path / "out" / "capacity.json").read_text())
    assert (answer["c_max"], answer["first_miss"]) == (C_MAX, C_MAX + 1)
