"""The step model's cost side: how long one engine step takes, and what speculation yields.

The scheduler (``model.StepEngine``) decides who runs in a step; this module prices it. One
step serves the running batch and lasts::

    step_base + decode_ms_per_seq * min(n_decoding, decode_batch_cap) ** decode_exp
              + ctx_ms_per_ktoken * context_tokens_held / 1000
              + prefill_ms_per_token * prompt_tokens_this_step (+ prefill_step_ms if any)
              + [speculative] draft_ms + verify_ms_per_token * (n_decoding * (k + 1)) ** verify_exp
                (above spec_graph_max_batch, the decode, draft and verify terms together:
                 spec_eager_step_ms, whatever the batch)

(before the scheduler's seeded jitter). Speculative decoding drafts ``k`` tokens per decoding
sequence and accepts a leading run of them, each with probability ``acceptance``.
"""

from __future__ import annotations

import numpy as np

from servecap.sim.model.params import ModelParams


def accepted_drafts(rng: np.random.Generator, k: int, acceptance: float, n: int) -> np.ndarray:
    """Leading draft tokens accepted by each of ``n`` sequences: the run of consecutive
    Bernoulli(``acceptance``) successes before the first failure, at most ``k``."""
    if k <= 0:
        return np.zeros(n, dtype=np.int64)
    draws = rng.random((n, k)) < acceptance
    return np.where(draws.all(axis=1), k, np.argmin(draws, axis=1))


def expected_tokens_per_step(k: int, acceptance: float) -> float:
    """Mean tokens emitted per speculative step: ``(1 - a^(k+1)) / (1 - a)``."""
    if acceptance >= 1.0:
        return float(k + 1)
    return (1.0 - acceptance ** (k + 1)) / (1.0 - acceptance)


def step_ms(
    p: ModelParams, n_decoding: int, prefill_tokens: int, context_tokens: int, spec_on: bool
) -> float:
    """Duration in ms of a step that decodes ``n_decoding`` sequences and prefills
    ``prefill_tokens`` prompt tokens while the batch holds ``context_tokens`` in its KV."""
    batch = min(n_decoding, p.decode_batch_cap) if p.decode_batch_cap > 0 else n_decoding
    decode = p.decode_ms_per_seq * batch**p.decode_exp
    if n_decoding and spec_on:
        k = p.num_spec_tokens
        decode += p.draft_ms + p.verify_ms_per_token * (n_decoding * (k + 1)) ** p.verify_exp
        if 0 < p.spec_graph_max_batch < n_decoding:
            decode = p.spec_eager_step_ms  # launch-bound: see ModelParams
    ms = p.step_base_ms + decode + p.ctx_ms_per_ktoken * context_tokens / 1000.0
    if prefill_tokens:
        ms += p.prefill_ms_per_token * prefill_tokens + p.prefill_step_ms
    return ms


__all__ = ["accepted_drafts", "expected_tokens_per_step", "step_ms"]
