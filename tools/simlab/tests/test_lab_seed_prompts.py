"""The seed tool's own prompts: their lengths, and sweeps and fits that send them."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest
from refit import main as calibrate_main
from seed_prompts import SEED_PROMPT_CHARS, seed_prompt_tokens
from tests.seed_data import SEED_CSV

from servecap.sim.calibration.fitting import fit_params
from servecap.sim.model.params import ModelParams
from servecap.sim.model.sweep import closed_loop_level, closed_loop_requests, sweep_like

# a prompt token costs 0.3 ms on top of a 25 ms prefill step: TTFT shows a prompt's length
PREFILL = ModelParams(frontend_ms=5.0, step_base_ms=10.0, decode_ms_per_seq=0.5,
                      prefill_step_ms=25.0, prefill_ms_per_token=0.3,
                      prefill_budget_tokens=2048)  # fmt: skip


def test_the_seed_prompts_are_not_128_tokens() -> None:
    """The facts sim/seed_prompts.py states: 100 prompts of 214-663 characters, 54-166
    tokens by the simulator's rule, 75 on average; an order is a shuffle of the same set."""
    assert len(SEED_PROMPT_CHARS) == 100
    assert (min(SEED_PROMPT_CHARS), max(SEED_PROMPT_CHARS)) == (214, 663)
    tokens = seed_prompt_tokens(0)
    assert (min(tokens), max(tokens)) == (54, 166)
    assert np.mean(tokens) == pytest.approx(74.56)
    assert sorted(seed_prompt_tokens(1)) == sorted(tokens)
    assert seed_prompt_tokens(1) != tokens and seed_prompt_tokens(0) == tokens


def test_a_level_sends_the_k_th_request_the_k_th_prompt_cycled() -> None:
    done = closed_loop_requests(PREFILL, 1, rounds=4, prompt_lengths=(10, 1000))
    ttft_ms = [1000 * r.ttft_s for r in sorted(done, key=lambda r: r.sent)]
    short, long = 25 + 0.3 * 10, 25 + 0.3 * 1000
    assert ttft_ms[0] < short + 30 and ttft_ms[2] < short + 30
    assert ttft_ms[1] > long and ttft_ms[3] > long
    row = closed_loop_level(PREFILL, 1, rounds=4, prompt_lengths=(10, 1000))
    assert row["prompt_tokens"] == 128  # the row keeps the workload it stands for


def test_prompt_lengths_stand_in_for_the_128_token_workload_only() -> None:
    rows = [{"concurrency": 1.0}, {"concurrency": 1.0, "prompt_tokens": 512.0,
                                   "output_tokens": 32.0}]  # fmt: skip
    plain = sweep_like(PREFILL, rows, rounds=3)
    seed = sweep_like(PREFILL, rows, rounds=3, prompt_lengths=seed_prompt_tokens(0))
    assert seed[0]["ttft_mean_ms"] < plain[0]["ttft_mean_ms"] - 10  # ~75 tokens, not 128
    assert seed[1] == plain[1]


def test_a_fit_at_the_prompts_sent_prices_a_prompt_token_right() -> None:
    """Levels measured with the seed's ~75-token prompts and fitted as if they were 128
    tokens price a prompt token at about 75/128 of its cost; fitted at the prompts sent,
    the cost comes back."""
    prompts = seed_prompt_tokens(0)
    rows = sweep_like(PREFILL, [{"concurrency": 1.0}, {"concurrency": 4.0}], 3,
                      prompt_lengths=prompts)  # fmt: skip
    start = PREFILL.model_copy(update={"prefill_ms_per_token": 0.05})
    free = ["prefill_ms_per_token"]
    got, _ = fit_params(rows, start, free, rounds=3, max_evals=40, prompt_lengths=prompts)
    assert got.prefill_ms_per_token == pytest.approx(0.3, rel=0.1)
    as_128, _ = fit_params(rows, start, free, rounds=3, max_evals=40)
    assert as_128.prefill_ms_per_token < 0.75 * got.prefill_ms_per_token


def test_the_seed_refit_says_which_prompts_it_swept(tmp_path: Path) -> None:
    out = tmp_path / "profiles"
    argv = ["--seed-csv", str(SEED_CSV), "--out-dir", str(out), "--only", "sglang-direct",
            "--evals", "1", "--rounds", "1", "--seed-prompts", "0",
            "--holdout-dir", str(tmp_path / "held")]  # fmt: skip
    assert calibrate_main(argv) == 0
    text = (out / "sglang-direct.toml").read_text()
    assert "--seed-prompts 0" in text.splitlines()[1]  # the command that makes it again
    sweep = tomllib.loads(text)["calibration"]["sweep"]
    assert sweep.endswith("(prompts of 54-166 tokens, 75 on average)"), sweep
