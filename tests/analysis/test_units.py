"""Small cases: pairs, measured aggregate output, break-even edge cases."""

from __future__ import annotations

import pytest

from servecap.analysis import ConfigSeries, Pair, analyse, infer_pairs, parse_pair
from servecap.analysis.aggregate import aggregate_output
from servecap.analysis.speedup import pair_speedup
from servecap.core.errors import UserInputError
from servecap.core.level_key import LevelKey
from servecap.core.summary import LevelSummary


def test_infer_pairs() -> None:
    names = ["a-direct", "a-spec", "b-spec", "c_spec", "c", "d-direct"]
    assert infer_pairs(names) == [
        Pair(spec="a-spec", base="a-direct"),
        Pair(spec="c_spec", base="c"),
    ]


@pytest.mark.parametrize("text", ["x", "x:", ":y", "a:b:c", "a-spec:nope", "a-spec:a-spec"])
def test_bad_pairs_raise_user_input_error(text: str) -> None:
    with pytest.raises(UserInputError, match="invalid pair"):
        parse_pair(text, ["a-spec", "a-direct"])


def test_measured_runs_use_output_tok_s() -> None:
    levels = [LevelSummary(concurrency=c, tps_mean=50.0, output_tok_s=40.0 * c) for c in (1, 2)]
    measured = aggregate_output(ConfigSeries("m", levels))
    assert [p.tok_s for p in measured.points] == [40.0, 80.0]
    assert {p.source for p in measured.points} == {"measured"}
    summary_only = aggregate_output(ConfigSeries("s", [LevelSummary(concurrency=4, tps_mean=10)]))
    assert summary_only.points[0].tok_s == 40.0 and summary_only.points[0].source == "tps_x_c"


def test_no_break_even_when_always_faster() -> None:
    spec = ConfigSeries("s", [LevelSummary(concurrency=c, tps_mean=20.0) for c in (1, 2)])
    base = ConfigSeries("b", [LevelSummary(concurrency=c, tps_mean=10.0) for c in (1, 2)])
    result = pair_speedup(Pair(spec="s", base="b"), spec, base)
    assert result.break_even is None and [p.ratio for p in result.points] == [2.0, 2.0]


def test_analyse_handles_sparse_levels() -> None:
    series = [ConfigSeries("only", [LevelSummary(concurrency=3, ttft_mean_ms=5.0)])]
    result = analyse(series, [])
    assert result.levels == [LevelKey.closed(3)] and result.slo.capacity["p90"][0].c_max is None
    assert any(r.scenario == "most_users" for r in result.recommendations)
