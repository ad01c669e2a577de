"""Starting points for calibrating the four seed deployments (kimi-k3-b300 report).

Each base records the deployment (engine, launch command from the report's section 3.3,
key flags, speculative settings) and the structural choices the fit does not search
(prefill budget, KV budget, number of draft tokens); ``calibrate`` fits the rest.
"""

from __future__ import annotations

from servecap.sim.model.params import ModelParams
from servecap.sim.profiles import Deployment, Profile

_VLLM_ENV = (
    "docker run --gpus all \\\n  --privileged --ipc=host -p 8000:8000 \\\n"
    "  -v ~/.cache/huggingface:/root/.cache/huggingface \\\n"
    "  -e VLLM_ENABLE_K3_LATENT_MOE_TAIL_FUSION=1 \\\n  -e VLLM_ALLREDUCE_USE_FLASHINFER=1 \\\n"
    "  -e VLLM_ENGINE_READY_TIMEOUT_S=3600 \\\n  -e VLLM_USE_V2_MODEL_RUNNER=1 \\\n"
    "  -e VLLM_USE_RUST_FRONTEND=1 \\\n  vllm/vllm-openai:kimi-k3 moonshotai/Kimi-K3 \\\n"
    "  --trust-remote-code \\\n  --load-format fastsafetensors \\\n  --moe-backend auto \\\n"
    "  --gpu-memory-utilization 0.95 \\\n  --tensor-parallel-size 8 \\\n"
    "  --max-model-len 1048576 \\\n  --kv-cache-dtype fp8 \\\n"
    '  --attention-config \'{"mla_prefill_backend":"TRTLLM_RAGGED",'
    '"use_prefill_query_quantization":true}\' \\\n'
    "  --enable-prefix-caching \\\n  --enable-auto-tool-choice \\\n"
    "  --tool-call-parser kimi_k3 \\\n  --reasoning-parser kimi_k3"
)
_VLLM_SPEC = (
    ' \\\n  --max-num-seqs 32 \\\n  --speculative-config \'{"model":"Inferact/Kimi-K3-DSpark", '
    '"num_speculative_tokens":7, "method": "dspark", "attention_backend": '
    '"FLASHINFER_MLA", "draft_sample_method": "probabilistic", '
    '"rejection_sample_method": "block"}\''
)


def _sglang(mamba: str, spec: bool) -> str:
    cmd = (
        "docker run --gpus all \\\n  --shm-size 32g \\\n  -p 30000:30000 \\\n"
        "  -v ~/.cache/huggingface:/root/.cache/huggingface \\\n"
        '  --env "HF_TOKEN=<your-hf-token>" \\\n  --ipc=host \\\n'
        "  lmsysorg/sglang:kimi-k3 \\\n  sglang serve \\\n    --trust-remote-code \\\n"
        "    --model-path moonshotai/Kimi-K3 \\\n    --tp-size 8 \\\n"
        "    --mem-fraction-static 0.85 \\\n    --reasoning-parser kimi_k3 \\\n"
        f"    --tool-call-parser kimi_k3 \\\n    --mamba-full-memory-ratio {mamba} \\\n"
        "    --host 0.0.0.0 \\\n    --port 30000"
    )
    if spec:
        cmd += (
            " \\\n    --speculative-algorithm DSPARK \\\n"
            "    --speculative-draft-model-path RadixArk/Kimi-K3-DSpark \\\n"
            "    --speculative-dspark-block-size 7 \\\n    --enable-linear-replayssm-spec"
        )
    return cmd


_VLLM_FLAGS = {
    "port": "8000",
    "gpu-memory-utilization": "0.95",
    "tensor-parallel-size": "8",
    "kv-cache-dtype": "fp8",
    "prefill-backend": "TRTLLM_RAGGED + prefill query quantization",
    "rust-frontend": "VLLM_USE_RUST_FRONTEND=1",
}
_SGLANG_FLAGS = {
    "port": "30000",
    "mem-fraction-static": "0.85",
    "tp-size": "8",
    "kv-cache-dtype": "default",
    "prefill-backend": "FlashInfer MLA (default)",
}
_SPEC_VLLM = {
    "method": "dspark",
    "draft_model": "Inferact/Kimi-K3-DSpark",
    "num_speculative_tokens": "7",
    "rejection_sample_method": "block",
}
_SPEC_SGLANG = {"method": "DSPARK", "draft_model": "RadixArk/Kimi-K3-DSpark", "block_size": "7"}

# Starting points for the fit: the profiles the calibrator wrote before it also fitted the
# P90 TTFT (fitted to all seven levels' means; vllm-direct's from a first fit with its hold
# in steps, with its knee hold of stop 35's fit put in: 30 steps, knee 7, no gate); the fit
# moves on from here. vLLM-direct and SGLang-spec hold new requests for a
# number of steps (admit_hold_steps), the other two for a time (admit_interval_ms): what
# their seed TTFTs show (a wait that grows with the step time, or one that does not).
# A held-out fit starts here too, so its error is somewhat flattered: these points were
# fitted to all seven levels. sglang-spec's is its profile of 2026-12-01 (mixed steps, no
# tail) with a frontend tail added: 12% of requests 375 ms late, from the seed's c=1 row (2
# of 10 requests at 630 ms or more where the mean is 451 ms, and at c=1 nothing queues) and
# its rows from c=4 on (about a tenth of requests near 1.1 s); its eager step's 67 ms is the
# floor of that fit, which saw c=16: c = 1, 8 and 64 leave the eager step loose, so the
# held-out fit's answer there rests on this start (from 30, 100 or 150 ms it predicts at
# 28.6%, 8.0% and 11.4% mean; README). sglang-direct's is not: when
# its SGLang scheduling policy (prefill_alone, output_lag) came in, its start was set by hand
# from c=1's TTFT (400 ms: a 20 ms frontend, a 365 ms prefill step, a decode step) with the
# step costs kept, and no hold.
_START: dict[str, dict[str, float]] = {
    "vllm-direct": {
        "frontend_ms": 18.807739,
        "frontend_jitter": 0.927032,
        "step_base_ms": 9.305767,
        "decode_ms_per_seq": 1.197754,
        "decode_exp": 0.636952,
        "ctx_ms_per_ktoken": 0.379594,
        "prefill_ms_per_token": 0.117265,
        "prefill_step_ms": 21.425747,
        "admit_ratio": 0.0,
        "admit_interval_ms": 60.127123,
        "admit_hold_steps": 30.0,
        "admit_hold_knee": 7.0,
    },
    "vllm-spec": {
        "frontend_ms": 37.30283,
        "frontend_jitter": 0.45549,
        "step_base_ms": 9.400311,
        "decode_ms_per_seq": 1.801327,
        "decode_exp": 0.768677,
        "ctx_ms_per_ktoken": 0.301912,
        "prefill_ms_per_token": 0.075659,
        "prefill_step_ms": 20.88382,
        "admit_ratio": 0.074613,
        "admit_interval_ms": 133.540979,
        "acceptance": 0.68986,
        "draft_ms": 2.494067,
        "verify_ms_per_token": 0.132004,
        "verify_exp": 1.197978,
    },
    "sglang-direct": {
        "frontend_ms": 20.0,
        "frontend_jitter": 1.0,
        "step_base_ms": 7.599393,
        "decode_ms_per_seq": 1.466654,
        "decode_exp": 0.487365,
        "ctx_ms_per_ktoken": 0.463951,
        "prefill_ms_per_token": 0.02,
        "prefill_step_ms": 365.0,
        "admit_ratio": 0.0,
        "admit_interval_ms": 0.0,
    },
    "sglang-spec": {
        "frontend_ms": 71.301824,
        "frontend_jitter": 0.362357,
        "frontend_tail_p": 0.12,
        "frontend_tail_ms": 375.0,
        "step_base_ms": 11.544687,
        "decode_ms_per_seq": 2.225463,
        "decode_exp": 0.550566,
        "ctx_ms_per_ktoken": 0.859451,
        "prefill_ms_per_token": 0.0,
        "prefill_step_ms": 330.691378,
        "admit_ratio": 0.0,
        "admit_interval_ms": 2.467157,
        "admit_hold_steps": 1.042142,
        "acceptance": 0.773497,
        "draft_ms": 0.0,
        "verify_ms_per_token": 0.358513,
        "verify_exp": 1.013959,
        "spec_eager_step_ms": 67.111342,
    },
}


#: streams of a closed loop that end together come back within a few ms of each other (the
#: client's turnaround); this window lets them join the batch an idle engine starts without
#: the admission hold, so a client's turnaround does not decide which of them wait (not
#: vllm-direct's: its seed TTFT holds such streams too, see _SET_FROM)
GATHER_MS = 25.0


#: SGLang's default --chunked-prefill-size (and --max-prefill-tokens) on a GPU of 160 GB or
#: more (server_args; 8192 from 35 GB, as on an H100 or H200); a B300 has 288 GB. At the
#: seed's 128/128 no level reaches either budget (64 prompts are 8192 tokens): the seed
#: profiles sweep identically under both, so only longer prompts tell them apart.
SGLANG_PREFILL_BUDGET = 16384
_SGLANG_BUDGET = (
    f"prefill_budget_tokens = {SGLANG_PREFILL_BUDGET} (SGLang's default "
    "--chunked-prefill-size on a GPU of 160 GB or more; a B300 has 288 GB)"
)


# What each base sets from the deployment rather than fitting it, and from where: written
# into the profile's [calibration] table as `set_from_deployment`.
_SET_FROM: dict[str, str] = {
    "vllm-direct": "prefill_budget_tokens = 512 (chunked prefill); max_num_seqs = 256 "
    "(vLLM's default --max-num-seqs); admit_hold_shape = 8 (the seed's wait beyond c=1's has "
    "a P90 of 1.3-1.6 times its mean from c=8 on; a gamma(8)'s is 1.47); gather_ms = 0 (the "
    "seed's c=8 TTFT, 388 ms or 25 ITLs, holds the streams of a closed loop that end "
    "together too: with a window that let them join an idle engine's batch unheld, the "
    "profile's c=8 TTFT swung from 165 to 312 ms over 12 seeded sweeps)",
    "vllm-spec": "num_spec_tokens = 7 (--speculative-config num_speculative_tokens 7); "
    "prefill_budget_tokens = 512 (chunked prefill); max_num_seqs = 256, not the command's 32: "
    "the seed's c=64 TTFT (1.0 s) rules a 32-sequence limit out (a queued request would "
    "wait a whole request, 6 s or more)",
    "sglang-direct": f"{_SGLANG_BUDGET}; max_num_seqs = 256; "
    "prefill_alone (no --enable-mixed-chunk: a prefill batch runs alone); output_lag "
    "(SGLang's overlap scheduler, on without speculation, hands a step's tokens out after "
    "launching the next step, and the hybrid model's eager prefill launch lasts as long as "
    "the prefill); idle_window_ms = 0 (an idle scheduler runs the first request it "
    "receives); no admission hold (SGLang admits at every step)",
    "sglang-spec": "num_spec_tokens = 7 (--speculative-dspark-block-size 7); "
    f"{_SGLANG_BUDGET}; "
    "prefill_alone (no --enable-mixed-chunk: a prefill batch runs alone; no output_lag, as "
    "SGLang turns its overlap scheduler off for speculative decoding); "
    "kv_budget_tokens = 8192 (32 requests of 128 + 128 tokens: the seed's TTFT jump at c=64); "
    "spec_graph_max_batch = 8 and spec_off_when_waiting (speculative CUDA graphs up to 8 "
    "sequences, speculation off under memory pressure: the seed's ITL at c=16 and c=64)",
}


def _base(
    name: str, desc: str, deployment: Deployment, **params: float | int | bool | str
) -> Profile:
    # prefix caching stays off. The seed's tool (CordatusAI/llm-benchmark) sends
    # prompts[:10c] of one shuffled list of 100 at every level, so each level resends the
    # prompts of the levels before it (from c=16 on, nearly all); but on a hybrid model
    # (Kimi K3's KDA layers) vLLM sizes its KV blocks to the linear-attention state, hundreds
    # of tokens (528 for Qwen3.5, vllm-project/vllm#40696), and caches full blocks only, so
    # ~128-token prompts never hit. With 16-token blocks the repeats would cut vllm-direct's
    # c=64 TTFT by 38%, and a refit with them predicted the held-out levels worse (14.6%
    # mean, 70.9% worst). `servecap sim --prefix-caching on` serves a profile with its cache
    # (vLLM's --enable-prefix-caching, SGLang's radix cache) for workloads that share them.
    merged = {
        "idle_window_ms": 3.0,
        "gather_ms": GATHER_MS,
        "prefix_caching": False,
        **_START[name],
        **params,
    }
    return Profile.model_validate(
        {
            "name": name,
            "description": desc,
            "model_id": "moonshotai/Kimi-K3",
            "params": ModelParams.model_validate(merged),
            "deployment": deployment,
            "calibration": {"set_from_deployment": _SET_FROM[name]},
        }
    )


def seed_bases() -> dict[str, Profile]:
    """The four seed deployments with their starting parameters, by config name."""
    vd = Deployment(engine="vllm", command=_VLLM_ENV, flags=_VLLM_FLAGS)
    vs = Deployment(
        engine="vllm",
        command=_VLLM_ENV + _VLLM_SPEC,
        flags={**_VLLM_FLAGS, "max-num-seqs": "32"},
        speculative=_SPEC_VLLM,
    )
    sd = Deployment(
        engine="sglang",
        command=_sglang("0.9", False),
        flags={**_SGLANG_FLAGS, "mamba-full-memory-ratio": "0.9"},
    )
    ss = Deployment(
        engine="sglang",
        command=_sglang("0.86", True),
        flags={**_SGLANG_FLAGS, "mamba-full-memory-ratio": "0.86"},
        speculative=_SPEC_SGLANG,
    )
    what = "Kimi K3 on 8x B300 ({}), calibrated to the seed report's Appendix A."
    return {
        "vllm-direct": _base(
            "vllm-direct",
            what.format("vLLM, no speculation"),
            vd,
            prefill_budget_tokens=512,
            admit_hold_shape=8.0,
            gather_ms=0.0,
        ),
        "vllm-spec": _base(
            "vllm-spec",
            what.format("vLLM + DSpark speculation"),
            vs,
            prefill_budget_tokens=512,
            num_spec_tokens=7,
        ),
        "sglang-direct": _base(
            "sglang-direct",
            what.format("SGLang, no speculation"),
            sd,
            prefill_budget_tokens=SGLANG_PREFILL_BUDGET,
            prefill_alone=True,
            output_lag=True,
            idle_window_ms=0.0,
        ),
        "sglang-spec": _base(
            "sglang-spec",
            what.format("SGLang + DSpark speculation"),
            ss,
            num_spec_tokens=7,
            prefill_budget_tokens=SGLANG_PREFILL_BUDGET,
            prefill_alone=True,
            kv_budget_tokens=8192,  # 32 requests of 128 + 128 tokens
            spec_off_when_waiting=True,
            spec_graph_max_batch=8,
        ),
    }
