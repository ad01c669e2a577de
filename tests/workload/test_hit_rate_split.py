"""`--prefix-hit-rate`'s construction: the prefix and suffix of a prompt, its ideal share,
and the prompts the source builds from it (shared prefix text, fresh suffixes, exact length)."""

from __future__ import annotations

import pytest

from servecap.api.run.run_config import RunConfig
from servecap.api.run.workload import build_source
from servecap.core.errors import UserInputError
from servecap.core.workload_spec import WorkloadSpec
from servecap.workload.prefix_cache import hit_rate_split


@pytest.mark.parametrize(("rate", "tokens", "prefix", "ideal"), [
    (0.6, 1024, 614, 614 / 1024), (0.0, 100, 0, 0.0), (1.0, 100, 99, 0.99), (0.5, 3, 2, 2 / 3),
])
def test_the_split(rate: float, tokens: int, prefix: int, ideal: float) -> None:
    split = hit_rate_split(rate, tokens)
    assert (split.prefix_tokens, split.prefix_tokens + split.suffix_tokens) == (prefix, tokens)
    assert split.suffix_tokens >= 1 and split.ideal == pytest.approx(ideal)


@pytest.mark.parametrize(("rate", "tokens"), [(1.01, 100), (-0.1, 100), (0.5, 1)])
def test_bad_splits_are_user_errors(rate: float, tokens: int) -> None:
    with pytest.raises(UserInputError, match="prefix hit rate"):
        hit_rate_split(rate, tokens)


def test_the_source_shares_exactly_the_prefix() -> None:
    config = RunConfig(input_tokens=200, seed=3,
                       workload=WorkloadSpec(prefix_hit_rate=0.75, prefix_groups=2))
    source = build_source(config)
    texts = [source.next_request().text for _ in range(20)]
    assert {len(t) for t in texts} == {4 * 200}  # 4 characters a token
    prefixes = {t[: 4 * 150] for t in texts}
    assert len(prefixes) == 2  # the pool of two shared prefixes, nothing else
    assert len({t[4 * 150:] for t in texts}) == 20  # every suffix fresh
    again = build_source(config)
    assert [again.next_request().text for _ in range(20)] == texts  # seeded


@pytest.mark.parametrize(("spec", "message"), [
    ({"prefix_hit_rate": 0.5, "prefix_tokens": 10}, "not both"),
    ({"prefix_hit_rate": 0.5, "dataset": "x.jsonl"}, "not a dataset"),
    ({"prefix_hit_rate": 0.5, "input_tokens": "uniform:10:20"}, "plain prompt length"),
    ({"prefix_hit_rate": 1.5}, "less than or equal to 1"),
])
def test_the_spec_refuses_what_it_cannot_build(spec: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        WorkloadSpec.model_validate(spec)
