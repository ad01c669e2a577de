"""Starting points for a fit: a generic continuous-batching engine, and llama.cpp's
``llama-server`` on a CPU. Each sets what the deployment states (sequence slots, KV budget)
and names what the fit searches (``GENERIC_FREE``, ``LLAMA_CPP_FREE``).
"""

from __future__ import annotations

from servecap.sim.model.params import ModelParams
from servecap.sim.profiles import Deployment, Profile

#: what a generic base fits: the step's cost (fixed part, per decoding sequence and its
#: growth with batch size, per prompt token) and the latency in front of the scheduler.
#: No admission hold: a measured engine's own waits come from its slots and KV budget.
GENERIC_FREE: tuple[str, ...] = (
    "frontend_ms",
    "step_base_ms",
    "decode_ms_per_seq",
    "decode_exp",
    "prefill_ms_per_token",
)

#: what a llama.cpp base fits besides: the batch size past which a decode step costs no more
LLAMA_CPP_FREE: tuple[str, ...] = (*GENERIC_FREE, "decode_batch_cap")


def generic_base(max_num_seqs: int = 256, kv_budget_tokens: int = 1_000_000) -> Profile:
    """A starting point for an engine that is not one of the seed deployments: continuous
    batching with ``max_num_seqs`` sequence slots and a KV budget (set from the
    deployment, e.g. llama-server's ``-np`` and ``-c``), prefill priced per token (one
    cost for any prompt length), admission at once; ``GENERIC_FREE`` is fitted."""
    params = ModelParams.model_validate({
        "frontend_ms": 5.0, "frontend_jitter": 0.2, "idle_window_ms": 1.0, "step_base_ms": 10.0,
        "decode_ms_per_seq": 1.0, "decode_exp": 1.0, "prefill_ms_per_token": 0.05,
        "prefill_budget_tokens": 2048, "max_num_seqs": max_num_seqs,
        "kv_budget_tokens": kv_budget_tokens,
    })  # fmt: skip
    set_from = f"max_num_seqs = {max_num_seqs}; kv_budget_tokens = {kv_budget_tokens}"
    return Profile.model_validate({
        "name": "calibrated",
        "params": params,
        "deployment": Deployment(engine="unknown", notes="calibrated from measurements"),
        "calibration": {"set_from_deployment": set_from},
    })  # fmt: skip


def llama_cpp_base(max_num_seqs: int = 8, kv_budget_tokens: int = 1_000_000) -> Profile:
    """The generic base for llama.cpp's `llama-server` on a CPU; ``LLAMA_CPP_FREE`` is fitted.
    Two things differ, both measured on llama-server (the tiny test model, 8 slots, one
    thread): its decode step stops growing past a few sequences (ITL 1.7, 3.5 and 7.2 ms at
    c = 1, 2, 4; 8.9, 8.2 and 8.0 at 6, 8, 16), so ``decode_batch_cap`` is fitted, starting
    at the slots (no cap); and its slots step together, so a closed loop's streams stay in
    lock-step (512/32 at c=4: ITL 7.4 ms, a pure decode step), so the frontend draws no
    spread (``frontend_jitter`` 0): with the generic 0.2 the model's streams drifted apart
    and prefilled into each other's decoding (ITL 12.1 ms predicted)."""
    generic = generic_base(max_num_seqs, kv_budget_tokens)
    params = generic.params.model_copy(
        update={"frontend_jitter": 0.0, "decode_batch_cap": float(max_num_seqs)}
    )
    set_from = (f"{generic.calibration['set_from_deployment']}; frontend_jitter = 0 "
                "(llama-server's slots step together)")  # fmt: skip
    return generic.model_copy(update={
        "params": params,
        "deployment": Deployment(engine="llama.cpp", notes="calibrated from measurements"),
        "calibration": {"set_from_deployment": set_from},
    })  # fmt: skip
