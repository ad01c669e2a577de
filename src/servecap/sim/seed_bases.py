"""Starting points for calibrating the four seed deployments (kimi-k3-b300 report).

Each base records the deployment (engine, launch command from the report's section 3.3,
key flags, speculative settings) and the structural choices the fit does not search
(prefill budget, KV budget, number of draft tokens); ``calibrate`` fits the rest.
"""

from __future__ import annotations

from servecap.sim.params import ModelParams
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

# Starting points for the fit, taken from earlier calibrator runs; the fit moves on from here.
_START: dict[str, dict[str, float]] = {
    "vllm-direct": {
        "frontend_ms": 13.26,
        "frontend_jitter": 0.4565,
        "step_base_ms": 11.02,
        "decode_ms_per_seq": 0.2502,
        "decode_exp": 0.9502,
        "ctx_ms_per_ktoken": 0.1914,
        "prefill_ms_per_token": 0.1434,
        "prefill_step_ms": 28.59,
        "admit_ratio": 0.1433,
        "admit_interval_ms": 339.6,
    },
    "vllm-spec": {
        "frontend_ms": 36.79,
        "frontend_jitter": 0.432,
        "step_base_ms": 9.04,
        "decode_ms_per_seq": 1.74,
        "decode_exp": 0.8486,
        "ctx_ms_per_ktoken": 0.1571,
        "prefill_ms_per_token": 0.1812,
        "prefill_step_ms": 15.72,
        "admit_ratio": 0.07252,
        "admit_interval_ms": 274.4,
        "acceptance": 0.6245,
        "draft_ms": 1.498,
        "verify_ms_per_token": 0.1009,
        "verify_exp": 1.168,
    },
    "sglang-direct": {
        "frontend_ms": 463.0,
        "frontend_jitter": 0.5608,
        "step_base_ms": 7.487,
        "decode_ms_per_seq": 1.483,
        "decode_exp": 0.631,
        "ctx_ms_per_ktoken": 0.1436,
        "prefill_ms_per_token": 0.01523,
        "prefill_step_ms": 34.02,
        "admit_ratio": 0.2393,
        "admit_interval_ms": 712.2,
    },
    "sglang-spec": {
        "frontend_ms": 69.84,
        "frontend_jitter": 0.3477,
        "step_base_ms": 12.94,
        "decode_ms_per_seq": 1.834,
        "decode_exp": 0.5057,
        "ctx_ms_per_ktoken": 0.9009,
        "prefill_ms_per_token": 0.05944,
        "prefill_step_ms": 315.7,
        "admit_ratio": 0.04,
        "admit_interval_ms": 0.0,
        "acceptance": 0.7889,
        "draft_ms": 0.0,
        "verify_ms_per_token": 0.5028,
        "verify_exp": 1.043,
        "spec_eager_factor": 1.0,
        "spec_eager_floor_ms": 104.5,
    },
}


#: streams of a closed loop that end together come back within a few ms of each other (the
#: client's turnaround); this window lets them join the batch an idle engine starts without
#: the admission hold, so a client's turnaround does not decide which of them wait
GATHER_MS = 25.0


def _base(
    name: str, desc: str, deployment: Deployment, **params: float | int | bool | str
) -> Profile:
    # prefix caching stays off: the seed's measurements that calibrated these profiles sent
    # distinct-enough prompts that no cache mattered, and with it on servecap's own built-in
    # prompts (which repeat after 120 requests) would hit and move the fit away from the
    # seed. `servecap sim --prefix-caching on` serves a profile with its cache (vLLM's
    # --enable-prefix-caching, SGLang's radix cache) for workloads that share prefixes.
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
            "vllm-direct", what.format("vLLM, no speculation"), vd, prefill_budget_tokens=512
        ),
        "vllm-spec": _base(
            "vllm-spec",
            what.format("vLLM + DSpark speculation"),
            vs,
            prefill_budget_tokens=512,
            num_spec_tokens=7,
        ),
        "sglang-direct": _base("sglang-direct", what.format("SGLang, no speculation"), sd),
        "sglang-spec": _base(
            "sglang-spec",
            what.format("SGLang + DSpark speculation"),
            ss,
            num_spec_tokens=7,
            kv_budget_tokens=8192,  # 32 requests of 128 + 128 tokens
            spec_off_when_waiting=True,
            spec_graph_max_batch=8,
        ),
    }
