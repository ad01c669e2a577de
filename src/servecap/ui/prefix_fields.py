"""The Run page's prefix-cache settings: prompts built for a hit rate, and the cache's reset
before each level (`--prefix-hit-rate`, `--reset-prefix-cache` on the command line)."""

from __future__ import annotations

from typing import Any

import streamlit as st

RESET_CHOICES = ("off", "auto", "URL")


def prefix_fields(key: str = "") -> dict[str, Any]:
    """The form's `prefix_hit_rate` and `reset_prefix_cache`, from an expander (`key`
    prefixes the widgets' keys, so two pages hold their own)."""
    with st.expander("Prefix cache"):
        built = st.checkbox("Build prompts for a prefix-cache hit rate", key=f"{key}prefix_built",
                            help="Each prompt is a shared prefix plus a fresh suffix, so an "
                                 "ideal cache serves this share of its tokens; the run checks "
                                 "what the server served, by its usage and its /metrics")
        rate = st.number_input("Hit rate (0..1)", 0.0, 1.0, 0.5, step=0.05,
                               key=f"{key}prefix_hit_rate", disabled=not built)
        how = st.radio("Reset the cache before each level", RESET_CHOICES, horizontal=True,
                       key=f"{key}reset_mode",
                       help="auto: vLLM (needs VLLM_SERVER_DEV_MODE=1), SGLang or the "
                            "simulator, as detected; a failed reset is a warning")
        url = st.text_input("Reset URL", key=f"{key}reset_url", disabled=how != "URL",
                            placeholder="http://127.0.0.1:8000/reset_prefix_cache")
    reset = url.strip() if how == "URL" else str(how)
    return {"prefix_hit_rate": float(rate) if built else None, "reset_prefix_cache": reset}
