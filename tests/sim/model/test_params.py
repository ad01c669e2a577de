"""The model's parameters: each names its mechanism, the admission policy is a named choice,
and profiles written before either (flat, with retired or unnamed parameters) still load."""

from __future__ import annotations

import tomllib

import pytest
from pydantic import ValidationError

from servecap.sim import MECHANISMS, ModelParams, load_profile, profile_to_toml
from servecap.sim.model.params import RETIRED, mechanism_of
from servecap.sim.profiles import profile_from_dict


def test_every_parameter_is_in_exactly_one_mechanism() -> None:
    named = [name for names in MECHANISMS.values() for name in names]
    assert sorted(named) == sorted(ModelParams.model_fields)
    assert len(named) == len(set(named))
    assert mechanism_of("admit_hold_knee") == "admission"
    assert mechanism_of("warmup_factor") == "warmup_drift"


@pytest.mark.parametrize(("numbers", "policy"), [
    ({}, "at_once"),
    ({"admit_interval_ms": 50.0}, "hold_ms"),
    ({"admit_ratio": 0.5}, "hold_ms"),
    ({"admit_interval_ms": 50.0, "admit_hold_steps": 3.0}, "hold_steps"),
    ({"admit_hold_steps": 3.0, "admit_hold_knee": 4.0}, "hold_knee"),
])  # fmt: skip
def test_an_unnamed_policy_is_the_one_its_numbers_used(
    numbers: dict[str, float], policy: str
) -> None:
    assert ModelParams.model_validate(numbers).admission == policy


def test_a_named_policy_wins_over_the_numbers() -> None:
    p = ModelParams.model_validate({"admission": "hold_ms", "admit_hold_steps": 3.0})
    assert p.admission == "hold_ms"
    with pytest.raises(ValidationError, match="admit_hold_knee"):
        ModelParams.model_validate({"admission": "hold_knee"})
    with pytest.raises(ValidationError):
        ModelParams.model_validate({"admission": "sometimes"})


def test_retired_parameters_load_and_are_dropped() -> None:
    assert {"frontend_tail_p", "frontend_tail_ms"} <= RETIRED.keys()
    p = ModelParams.model_validate({"frontend_tail_p": 0.1, "frontend_tail_ms": 300.0,
                                    "spec_eager_floor_ms": 60.0})  # fmt: skip
    assert p.spec_eager_step_ms == 60.0
    assert "frontend_tail_p" not in p.model_dump()


def test_params_may_be_grouped_by_mechanism_or_flat() -> None:
    flat = profile_from_dict({"name": "f", "params": {"step_base_ms": 4.0, "kv_budget_tokens": 9}})
    grouped = profile_from_dict({"name": "f", "params": {
        "batching": {"step_base_ms": 4.0}, "kv_cache": {"kv_budget_tokens": 9}}})  # fmt: skip
    assert flat.params == grouped.params
    with pytest.raises(ValueError, match="batching"):
        profile_from_dict({"name": "f", "params": {"batching": 3}})


@pytest.mark.parametrize("name", ["vllm-direct", "vllm-spec", "sglang-direct", "sglang-spec"])
def test_a_profile_written_grouped_reads_back_the_same(name: str) -> None:
    profile = load_profile(name)
    text = profile_to_toml(profile)
    data = tomllib.loads(text)
    assert set(data["params"]) <= set(MECHANISMS)
    assert data["params"]["admission"]["admission"] == profile.params.admission
    assert profile_from_dict(data).params == profile.params
