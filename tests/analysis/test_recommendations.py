"""Scenario recommendations against the seed's section 1, with the numbers behind both."""

from __future__ import annotations

from servecap.analysis import Analysis


def _rec(analysis: Analysis, scenario: str):
    return next(r for r in analysis.recommendations if r.scenario == scenario)


def test_interactive_low_load_is_vllm_spec(seed_analysis: Analysis) -> None:
    rec = _rec(seed_analysis, "interactive_low_load")
    assert rec.config == "vllm-spec" and rec.runner_up == "vllm-direct"
    assert "1.13-1.86x" in rec.reason
    assert rec.reference_note and "agrees" in rec.reference_note


def test_high_load_is_vllm_direct(seed_analysis: Analysis) -> None:
    rec = _rec(seed_analysis, "high_load")
    assert rec.config == "vllm-direct"
    assert "1126 tok/s at c=32" in rec.reason


def test_max_throughput_names_both_direct_configs(seed_analysis: Analysis) -> None:
    rec = _rec(seed_analysis, "max_throughput")
    assert rec.config == "sglang-direct" and rec.runner_up == "vllm-direct"
    assert "1863" in rec.reason and "1759" in rec.reason
    assert rec.reference_note and "1759" in rec.reference_note


def test_min_itl_differs_from_seed_and_shows_both(seed_analysis: Analysis) -> None:
    rec = _rec(seed_analysis, "min_itl")
    assert rec.config == "sglang-spec" and rec.runner_up == "vllm-spec"
    assert rec.reference == "vllm-spec"
    note = rec.reference_note or ""
    for number in ("4.84 ms", "71.0 ms", "4.26 ms", "450.6 ms"):
        assert number in note


def test_most_users(seed_analysis: Analysis) -> None:
    rec = _rec(seed_analysis, "most_users")
    assert rec.config == "vllm-direct" and "427 users" in rec.reason
    assert "682" in rec.reason


def test_high_load_without_any_compliant_config_picks_the_closest(
    seed_series: list,
) -> None:
    """With a TTFT SLO nobody meets at c>=32, the ranking must not fall back on names."""
    from servecap.analysis import AnalysisOptions, analyse, infer_pairs
    from servecap.core.config import SLO

    names = [s.name for s in seed_series]
    options = AnalysisOptions(slo=SLO(ttft_ms=500))
    analysis = analyse(seed_series, infer_pairs(names), options)
    rec = _rec(analysis, "high_load")
    assert rec.numbers["passing_levels"] == 0
    # vllm-direct's TTFT P90 (888/1107 ms) is the least far from 500 ms; vllm-spec's TPS
    # tail collapses at c=64, and the SGLang configs' TTFT is higher still.
    assert rec.config == "vllm-direct"
    assert "closest to the SLOs" in rec.reason


def test_a_users_run_beside_the_sweeps_leaves_the_scenarios_theirs(
    seed_series: list,
) -> None:
    """A sessions run (levels users=N) in the same report has no level the sweeps share:
    the scenarios still compare the sweeps at their concurrency levels."""
    from servecap.analysis import ConfigSeries, analyse, infer_pairs

    base = seed_series[0]
    users = ConfigSeries("vllm-users", [
        lv.model_copy(update={"concurrency": None, "level": f"users={100 * lv.concurrency}"})
        for lv in base.levels if lv.concurrency >= 16
    ], imported=True)  # fmt: skip
    mixed = [*seed_series, users]
    analysis = analyse(mixed, infer_pairs([s.name for s in mixed]))
    rec = _rec(analysis, "high_load")
    assert rec.config == "vllm-direct" and "1126 tok/s at c=32" in rec.reason
    for scenario in analysis.recommendations:
        assert "users=" not in scenario.reason, scenario
