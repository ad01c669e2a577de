"""Render the simulator's state as Prometheus text with vLLM-style metric names.

The prefix-cache counters are vLLM v1's: ``vllm:prefix_cache_queries`` and
``vllm:prefix_cache_hits`` count prompt tokens (looked up, found cached) once per admitted
request; their ratio is the hit rate. ``vllm:prompt_tokens`` counts every prompt token,
cached or computed, as vLLM's does. ``vllm:num_preemptions`` stays 0: the simulator admits
by reservation and never preempts. The TTFT and ITL histograms are what the simulator served
(sim/histogram.py), in real seconds.
"""

from __future__ import annotations

from servecap.sim.server.engine_loop import EngineLoop


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render_metrics(loop: EngineLoop, model_name: str) -> str:
    """The /metrics body (text exposition format 0.0.4)."""
    c = loop.engine.counters
    label = f'{{model_name="{_escape(model_name)}"}}'
    gauges = [
        ("vllm:num_requests_running", "Requests in the running batch.", c.running),
        ("vllm:num_requests_waiting", "Requests waiting to be scheduled.", c.waiting),
        ("vllm:gpu_cache_usage_perc", "KV-cache usage, 0..1 (older name).", c.kv_usage),
        ("vllm:kv_cache_usage_perc", "KV-cache usage, 0..1.", c.kv_usage),
        ("sim:time_scale", "Model seconds per real second.", loop.scale),
        (
            "sim:step_lateness_seconds_max",
            "Largest real lateness of an engine event.",
            loop.lateness.max,
        ),
        (
            "sim:step_lateness_seconds_mean",
            "Mean real lateness of engine events.",
            loop.lateness.mean,
        ),
        (
            "sim:chunk_lateness_seconds_max",
            "Largest real lateness of a chunk write against its engine event.",
            loop.chunks.max,
        ),
    ]
    counters = [
        ("vllm:prompt_tokens", "Prefill tokens processed.", c.prompt_tokens),
        ("vllm:generation_tokens", "Generation tokens produced.", c.generation_tokens),
        ("vllm:spec_decode_num_drafts", "Draft proposals (one per sequence a step).", c.drafts),
        ("vllm:spec_decode_num_draft_tokens", "Draft tokens proposed.", c.draft_tokens),
        ("vllm:spec_decode_num_accepted_tokens", "Draft tokens accepted.", c.accepted_tokens),
        ("vllm:request_success", "Requests finished.", loop.requests_done),
        ("vllm:num_preemptions", "Requests preempted (never: admission reserves).", 0),
        (
            "vllm:prefix_cache_queries",
            "Prefix cache queries, in prompt tokens looked up (0 with caching off).",
            c.prefix_queries,
        ),
        (
            "vllm:prefix_cache_hits",
            "Prefix cache hits, in prompt tokens the cache held.",
            c.prefix_hits,
        ),
        ("sim:engine_steps", "Engine steps executed.", c.steps),
        (
            "sim:step_lateness_seconds",
            "Sum of engine-event lateness (real s).",
            loop.lateness.total,
        ),
        ("sim:step_lateness_events", "Engine events timed.", loop.lateness.count),
        ("sim:chunk_lateness_seconds", "Sum of chunk-write lateness.", loop.chunks.total),
        ("sim:chunk_lateness_chunks", "Chunk writes timed.", loop.chunks.count),
        (
            "sim:first_token_lateness_seconds",
            "Sum of first-token chunk-write lateness.",
            loop.first_tokens.total,
        ),
        ("sim:first_token_lateness_chunks", "First-token writes timed.", loop.first_tokens.count),
        ("sim:deliver_seconds", "Real s building and writing steps' chunks.", loop.deliver_seconds),
        ("sim:write_seconds", "Real s of that writing them to the sockets.", loop.write_seconds),
    ]
    lines: list[str] = []
    for name, doc, value in gauges:
        lines += [f"# HELP {name} {doc}", f"# TYPE {name} gauge", f"{name}{label} {value}"]
    for name, doc, value in counters:
        lines += [f"# HELP {name} {doc}", f"# TYPE {name} counter"]
        lines.append(f"{name}_total{label} {value}")
    inner = label[1:-1]
    for name, doc, hist in (
        ("vllm:time_to_first_token_seconds", "TTFT as served, real s.", loop.served.ttft),
        ("vllm:inter_token_latency_seconds", "ITL per token as served, real s.", loop.served.itl),
    ):
        lines += [f"# HELP {name} {doc}", f"# TYPE {name} histogram", *hist.lines(name, inner)]
    return "\n".join(lines) + "\n"
