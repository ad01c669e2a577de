"""The report's comparison section and its charts, from synthetic records (no servers)."""

from __future__ import annotations

from servecap.analysis.capacity_delta import headline
from servecap.analysis.comparison import compare_targets
from servecap.core.config import SLO
from servecap.core.summary import LevelSummary
from servecap.report.charts_compare import section_charts
from servecap.report.comparison import comparison_section
from tests.compare.test_headline import _target

SLO_40 = SLO(ttft_ms=1000, tps=40.0, statistic="p90", think_time_s=10)


def _levels(thin: set[int]) -> list[LevelSummary]:
    """Summaries whose `thin` levels warn of too few samples (P90 and P99)."""
    return [
        LevelSummary(concurrency=c, n_requests=60, n_ok=60, n_failed=0, warnings=[
            "P90 from only 12 successful requests (want >= 20)",
            "P99 from only 12 successful requests (want >= 200)",
        ] if c in thin else ["P99 from only 60 successful requests (want >= 200)"])
        for c in (1, 2, 4, 8, 16, 32)
    ]


def _section():
    samples = {"a": _target(1, 11.0), "b": _target(2, 10.0)}
    pairs = compare_targets(samples, interleaved=True, seed=3)
    heads = [headline(p, SLO_40) for p in pairs]
    levels = {"a": _levels({1, 32}), "b": _levels({2})}
    return heads[0], comparison_section(pairs, heads, SLO_40, "method", levels, repeats=3)


def test_warnings_sit_beside_the_capacity_they_concern() -> None:
    head, section = _section()
    (pair,) = section.pairs
    assert [line.text for line in pair.lines] == head.sentences
    by_text = {line.text.split(":")[0]: line for line in pair.lines}
    a, b = by_text["a"], by_text["b"]
    # only the statistic's own warning (P90, not P99), only of levels deciding C_max: a's
    # c=32 lies above its first failing level, so it does not concern its C_max
    assert head.a.c_max_high is not None and head.a.c_max_high < 16
    assert a.warnings == ["c=1: P90 from only 12 successful requests (want >= 20)"]
    assert b.warnings == ["c=2: P90 from only 12 successful requests (want >= 20)"]
    assert "small sample: c=2" in b.note()
    assert not pair.lines[0].warnings and pair.lines[0].note() == ""
    assert "Interleaved comparison, 3 repeats per level" in section.setting()


def test_charts_carry_every_interval_as_an_error_bar() -> None:
    head, section = _section()
    charts = {c.info.id: c for c in section_charts(section)}
    assert list(charts) == ["C1", "C2", "C3", "C4", "C5"]
    (delta,) = charts["C1"].traces
    d = head.users_difference
    assert d is not None and (delta.y, delta.low, delta.high) == ([d.estimate], [d.low], [d.high])
    (speedup,) = charts["C3"].traces
    assert speedup.low == [s.ratio.low for s in head.speedups]
    assert charts["C4"].hline == 1000 and charts["C5"].hline == 40.0
    for trace in charts["C4"].traces + charts["C5"].traces:
        assert all(lo <= y <= hi for y, lo, hi in zip(trace.y, trace.low, trace.high,
                                                       strict=True))


def test_each_level_has_its_verdicts_named() -> None:
    _, section = _section()
    (pair,) = section.pairs
    assert pair.verdict_header == ["level", "TTFT P90", "TPS P90", "latency mean"]
    assert [row.level for row in pair.verdicts] == [f"c={c}" for c in (1, 2, 4, 8, 16, 32)]
    for row in pair.verdicts:
        ttft, tps, latency = row.cells
        # b's steps are 10% cheaper: at least the means say so, with B - A below 0 for times
        assert latency.startswith("b better: B - A -") and "CI -" in latency, row
        assert tps.startswith(("b better: B - A +", "no significant difference")), row
        assert not ttft.startswith("a better"), row
