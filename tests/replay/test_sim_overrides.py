"""`servecap sim --prefix-caching on|off --kv-budget-tokens N`: the seed profiles serve
without a prefix cache (they were calibrated without one) unless asked for it."""

from __future__ import annotations

import pytest
import typer

from servecap.sim import load_profile
from servecap.sim.cli import _with_overrides


def test_seed_profiles_serve_without_a_cache_unless_asked() -> None:
    base = load_profile("vllm-direct")
    assert not base.params.prefix_caching
    on = _with_overrides(base, "on", 40_000_000)
    assert on.params.prefix_caching and on.params.kv_budget_tokens == 40_000_000
    assert on.params.step_base_ms == base.params.step_base_ms  # nothing else moves
    assert not _with_overrides(on, "off", None).params.prefix_caching
    assert _with_overrides(base, None, None) is base


@pytest.mark.parametrize(
    ("profile", "caching", "budget"),
    [("vllm-direct", "maybe", None), ("vllm-direct", None, 0), ("deterministic", "on", None)],
)
def test_bad_overrides_exit_2(profile: str, caching: str | None, budget: int | None) -> None:
    with pytest.raises(typer.Exit) as exc:
        _with_overrides(load_profile(profile), caching, budget)
    assert exc.value.exit_code == 2
