"""A tiny "copying" llama: its greedy output repeats its own last token, so that n-gram
speculative decoding has drafts to accept (the seed's speculative deployments paid off at low
concurrency; a random model's output rarely repeats itself and gives ~0.5% acceptance).

The same tokenizer and shape as `tinymodel`, with two changes to the weights:

- every layer's attention output (`o_proj`) and MLP output (`down_proj`) is zero, so each
  layer adds nothing and the residual stream reaching the head is the current token's embedding;
- the output head is the embedding table itself, so the logit of token v is e_v . e_t / rms(e_t):
  ~384 for v = t against ~N(0, 20^2) for the others (~60 at most over 512 tokens).

So the next token is the current one, whatever the position or context. The first generated
token follows the chat template's last token (a newline, whose head row is zero like every
token that must never be generated): it is whichever printable token scores highest against
that newline, then the model repeats it. Every request still runs to `max_tokens`.

    python -m tests.engines.copymodel      # build (or reuse) and print the folder
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from tests.engines import tinymodel

# Bump when anything below changes what is written: it keys the cache directory.
MODEL_VERSION = "tiny-copy-v1"


def make_copy_weights(tokenizer: Any) -> dict[str, np.ndarray]:
    """The tiny model's weights with every layer's output zeroed and the head = embeddings."""
    weights = tinymodel.make_weights(tokenizer)
    for name, array in weights.items():
        if name.endswith(("self_attn.o_proj.weight", "mlp.down_proj.weight")):
            weights[name] = np.zeros_like(array)
    # tinymodel zeroed the head rows of tokens never to be generated: keep those rows zero
    never = ~weights["lm_head.weight"].any(axis=1)
    head = weights["model.embed_tokens.weight"].copy()
    head[never] = 0.0
    weights["lm_head.weight"] = head
    return weights


def ensure_copy_model(cache: Path | None = None) -> Path:
    """The cached Hugging Face folder of the copying model, made on first use."""
    base = (cache or tinymodel.cache_root()) / "models"
    final = base / MODEL_VERSION
    if (final / "VERSION").is_file():
        return final / "hf"
    base.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=MODEL_VERSION + ".", dir=base))
    try:
        root = staging / "model"
        tokenizer = tinymodel.train_tokenizer()
        tinymodel.write_hf(root / "hf", tokenizer, make_copy_weights(tokenizer))
        (root / "VERSION").write_text(MODEL_VERSION + "\n")
        try:
            root.rename(final)
        except OSError:  # another process finished first
            if not (final / "VERSION").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final / "hf"


if __name__ == "__main__":
    print(ensure_copy_model())
