"""Profiles: built-ins, user files (TOML and JSON), and clear errors for bad files."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from servecap.sim.profiles import (
    ProfileError,
    builtin_names,
    builtin_profile,
    load_profile,
    load_profile_file,
)
from servecap.sim.profiles.tomlout import profile_to_toml


def test_builtins_are_listed_and_load() -> None:
    names = builtin_names()
    assert {"deterministic", "vllm-direct", "vllm-spec", "sglang-direct", "sglang-spec"} <= set(
        names
    )
    for name in names:
        prof = builtin_profile(name)
        assert prof.name == name


def test_seed_profiles_carry_their_deployment() -> None:
    spec = load_profile("vllm-spec")
    assert spec.deployment.engine == "vllm"
    assert "--speculative-config" in spec.deployment.command
    assert spec.deployment.speculative["num_speculative_tokens"] == "7"
    assert spec.params.num_spec_tokens == 7
    sgl = load_profile("sglang-direct")
    assert sgl.deployment.engine == "sglang" and "sglang serve" in sgl.deployment.command
    assert "calibrat" in Path(str(sgl.calibration.get("source", ""))).name or sgl.calibration


def test_seed_profiles_say_how_they_were_made() -> None:
    from importlib import resources

    text = resources.files("servecap.sim.profiles").joinpath("vllm-direct.toml").read_text()
    assert text.startswith("#") and "--seed-csv" in text


def test_toml_and_json_user_files(tmp_path: Path) -> None:
    toml_file = tmp_path / "mine.toml"
    toml_file.write_text('description = "x"\n[params]\nstep_base_ms = 3.5\nmax_num_seqs = 4\n')
    prof = load_profile(str(toml_file))
    assert prof.name == "mine" and prof.params.step_base_ms == 3.5
    json_file = tmp_path / "other.json"
    json_file.write_text(
        json.dumps({"name": "j", "params": {"fixed_ttft_ms": 1, "fixed_itl_ms": 2}})
    )
    assert load_profile_file(json_file).params.fixed


def test_a_profile_written_before_a_parameter_was_retired_loads(tmp_path: Path) -> None:
    """Every profile written before the eager step became one cost (a calibrated one names
    all parameters) still loads: its floor is the step's cost, its factor is dropped."""
    old = tmp_path / "old.toml"
    old.write_text("[params]\nspec_graph_max_batch = 8\nspec_eager_factor = 1.0\n"
                   "spec_eager_floor_ms = 73.9\n")  # fmt: skip
    params = load_profile_file(old).params
    assert params.spec_eager_step_ms == 73.9 and "spec_eager_factor" not in params.model_dump()
    new = tmp_path / "new.toml"
    new.write_text("[params]\nspec_eager_floor_ms = 1.0\nspec_eager_step_ms = 2.0\n")
    assert load_profile_file(new).params.spec_eager_step_ms == 2.0  # the new name wins


def test_written_toml_round_trips() -> None:
    prof = load_profile("sglang-spec")
    again = load_profile_file_from_text(profile_to_toml(prof, "a header\nline two"))
    assert again == prof


def load_profile_file_from_text(text: str) -> object:
    from servecap.sim.profiles import profile_from_dict

    return profile_from_dict(tomllib.loads(text))


@pytest.mark.parametrize(
    ("name", "content", "needle"),
    [
        ("bad.toml", "name = [unclosed", "not valid TOML"),
        ("bad.json", "{nope", "not valid JSON"),
        ("list.json", "[1, 2]", "top level"),
        ("neg.toml", "[params]\nstep_base_ms = -1\n", "params.step_base_ms"),
        ("typo.toml", "[params]\nstep_bse_ms = 1\n", "params.step_bse_ms"),
        ("type.toml", "[params]\nmax_num_seqs = 'many'\n", "params.max_num_seqs"),
        ("bad.yaml", "a: 1", ".toml or .json"),
    ],
)
def test_bad_files_raise_profile_error(
    tmp_path: Path, name: str, content: str, needle: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ProfileError) as info:
        load_profile_file(path)
    assert needle in str(info.value)
    assert isinstance(info.value, ValueError)


def test_unknown_name_and_missing_file() -> None:
    with pytest.raises(ProfileError, match="unknown profile 'nope'"):
        load_profile("nope")
    with pytest.raises(ProfileError, match="cannot read"):
        load_profile("/nonexistent/x.toml")
