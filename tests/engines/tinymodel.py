"""A tiny random-weight llama model, made offline, in GGUF and Hugging Face formats.

No model can be downloaded here, so the engine tests make their own: a byte-level BPE
vocabulary trained with `tokenizers` on servecap's own prompt text (sized so a prompt built
for N tokens comes out near N tokens), random weights from a seeded numpy generator, and
two writers over the same weights: `gguf` for llama-server, `safetensors` + JSON for
`transformers serve`.

Every output row of a token that must never be generated (the special tokens, and tokens that
do not decode to printable, non-blank ASCII text) is zero, and the other rows are large, so
the zero logits of those tokens sit ~40 nats below the best one: the model never stops early
and every generated token decodes to its own text. Each request therefore returns exactly
`max_tokens` tokens, one per streamed chunk, on any server and any sampler.

    python -m tests.engines.tinymodel      # build (or reuse) and print the paths
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

# Bump when anything below changes what is written: it keys the cache directory.
MODEL_VERSION = "tiny-llama-v2"
SEED = 1234

VOCAB_SIZE = 512  # 4.0 chars/token on servecap's built-in prompts (see tests)
HIDDEN = 384
LAYERS = 6
HEADS = 6
KV_HEADS = 6
FFN = 1024
CONTEXT = 4096
RMS_EPS = 1e-5
ROPE_THETA = 10000.0
LOGIT_SCALE = 1.0  # output-row std: logits ~ N(0, sqrt(384)^2) ~ N(0, 20^2)

BOS = "<|endoftext|>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
SPECIALS = (BOS, IM_START, IM_END)
CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


@dataclass(frozen=True)
class TinyModel:
    """Where the made model lives: one GGUF file and one Hugging Face folder."""

    root: Path
    gguf: Path
    hf_dir: Path
    tokenizer_json: Path


def cache_root() -> Path:
    """`$SERVECAP_CACHE`, else `~/.cache/servecap`."""
    env = os.environ.get("SERVECAP_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "servecap"


def paths(root: Path) -> TinyModel:
    """The file layout of a made model under `root`."""
    hf_dir = root / "hf"
    return TinyModel(root, root / "tiny.gguf", hf_dir, hf_dir / "tokenizer.json")


def training_corpus() -> list[str]:
    """Text the vocabulary learns from: servecap's own prompt generator, several lengths."""
    from servecap.workload.prompts import build_prompts

    texts: list[str] = []
    for seed in range(3):
        for tokens in (64, 256):
            texts.extend(p.text for p in build_prompts(tokens, seed=seed))
    return texts


def train_tokenizer() -> Any:  # a tokenizers.Tokenizer (imported lazily)
    """A byte-level BPE (GPT-2 pre-tokenizer) with the three ChatML special tokens first."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=list(SPECIALS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(training_corpus(), trainer)
    return tokenizer


def generable(text: str) -> bool:
    """A token may be generated when it decodes to printable ASCII that is not all blank."""
    return bool(text.strip()) and text.isascii() and text.isprintable()


def make_weights(tokenizer: Any) -> dict[str, np.ndarray]:
    """Seeded random weights under Hugging Face llama names (rows = output features)."""
    rng = np.random.default_rng(SEED)
    vocab = tokenizer.get_vocab_size()
    head_dim = HIDDEN // HEADS

    def normal(shape: tuple[int, ...], std: float) -> np.ndarray:
        return rng.normal(0.0, std, size=shape).astype(np.float32)

    weights = {
        "model.embed_tokens.weight": normal((vocab, HIDDEN), 1.0),
        "model.norm.weight": np.ones(HIDDEN, dtype=np.float32),
    }
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        weights[p + "input_layernorm.weight"] = np.ones(HIDDEN, dtype=np.float32)
        weights[p + "post_attention_layernorm.weight"] = np.ones(HIDDEN, dtype=np.float32)
        weights[p + "self_attn.q_proj.weight"] = normal((HEADS * head_dim, HIDDEN), 0.05)
        weights[p + "self_attn.k_proj.weight"] = normal((KV_HEADS * head_dim, HIDDEN), 0.05)
        weights[p + "self_attn.v_proj.weight"] = normal((KV_HEADS * head_dim, HIDDEN), 0.05)
        weights[p + "self_attn.o_proj.weight"] = normal((HIDDEN, HEADS * head_dim), 0.05)
        weights[p + "mlp.gate_proj.weight"] = normal((FFN, HIDDEN), 0.05)
        weights[p + "mlp.up_proj.weight"] = normal((FFN, HIDDEN), 0.05)
        weights[p + "mlp.down_proj.weight"] = normal((HIDDEN, FFN), 0.05)
    head = normal((vocab, HIDDEN), LOGIT_SCALE)
    special_ids = {tokenizer.token_to_id(name) for name in SPECIALS}
    for token_id in range(vocab):
        text = tokenizer.decode([token_id], skip_special_tokens=False)
        if token_id in special_ids or not generable(text):
            head[token_id] = 0.0
    weights["lm_head.weight"] = head
    return weights


def to_interleaved_rope(weight: np.ndarray, n_heads: int) -> np.ndarray:
    """Reorder q/k rows from HF's half-split rotary layout to llama.cpp's adjacent pairs.

    Per head, HF rotates dims (j, j + d/2) together; llama.cpp's llama arch rotates (2j, 2j+1).
    Row j of the half-split layout becomes row 2j, row j + d/2 becomes row 2j + 1.
    """
    rows, cols = weight.shape
    half = rows // n_heads // 2
    split = weight.reshape(n_heads, 2, half, cols)
    return np.ascontiguousarray(split.transpose(0, 2, 1, 3).reshape(rows, cols))


def write_gguf(path: Path, tokenizer: Any, weights: dict[str, np.ndarray]) -> None:
    """The same model as a GGUF file (F32 tensors, gpt2 BPE vocab, ChatML template)."""
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name(MODEL_VERSION)
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(HIDDEN)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_rope_dimension_count(HIDDEN // HEADS)
    writer.add_rope_freq_base(ROPE_THETA)
    writer.add_layer_norm_rms_eps(RMS_EPS)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    _gguf_vocab(writer, tokenizer)
    for name, array in _gguf_tensors(weights):
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def _gguf_vocab(writer: Any, tokenizer: Any) -> None:
    import gguf

    by_id = sorted(tokenizer.get_vocab(with_added_tokens=True).items(), key=lambda kv: kv[1])
    tokens = [text for text, _ in by_id]
    kinds = [
        gguf.TokenType.CONTROL if text in SPECIALS else gguf.TokenType.NORMAL for text in tokens
    ]
    model = json.loads(tokenizer.to_str())["model"]
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list(tokens)
    writer.add_token_types(kinds)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(tokenizer.token_to_id(BOS))
    writer.add_eos_token_id(tokenizer.token_to_id(IM_END))
    writer.add_eot_token_id(tokenizer.token_to_id(IM_END))
    writer.add_pad_token_id(tokenizer.token_to_id(BOS))
    writer.add_add_bos_token(False)
    writer.add_chat_template(CHATML)


def _gguf_tensors(weights: dict[str, np.ndarray]) -> Iterator[tuple[str, np.ndarray]]:
    """(GGUF name, array) pairs; numpy shapes stay (rows, cols), the writer reverses them."""
    yield "token_embd.weight", weights["model.embed_tokens.weight"]
    yield "output_norm.weight", weights["model.norm.weight"]
    yield "output.weight", weights["lm_head.weight"]
    names = {
        "input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
        "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k",
        "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
        "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down",
    }
    for i in range(LAYERS):
        for hf, short in names.items():
            array = weights[f"model.layers.{i}.{hf}.weight"]
            if short == "attn_q":
                array = to_interleaved_rope(array, HEADS)
            elif short == "attn_k":
                array = to_interleaved_rope(array, KV_HEADS)
            yield f"blk.{i}.{short}.weight", array


def write_hf(folder: Path, tokenizer: Any, weights: dict[str, np.ndarray]) -> None:
    """The same model as a Hugging Face folder: config, safetensors, tokenizer files."""
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
    tokenizer.save(str(folder / "tokenizer.json"))
    ids = {name: tokenizer.token_to_id(name) for name in SPECIALS}
    config = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "vocab_size": tokenizer.get_vocab_size(), "hidden_size": HIDDEN,
        "intermediate_size": FFN, "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS,
        "max_position_embeddings": CONTEXT, "rms_norm_eps": RMS_EPS,
        "rope_theta": ROPE_THETA, "hidden_act": "silu", "tie_word_embeddings": False,
        "attention_bias": False, "mlp_bias": False, "torch_dtype": "float32",
        "bos_token_id": ids[BOS], "eos_token_id": ids[IM_END], "pad_token_id": ids[BOS],
    }
    generation = {
        "bos_token_id": ids[BOS], "eos_token_id": ids[IM_END], "pad_token_id": ids[BOS],
        "do_sample": False,
    }
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": CONTEXT,
        "bos_token": BOS, "eos_token": IM_END, "pad_token": BOS, "unk_token": None,
        "add_bos_token": False, "add_eos_token": False, "chat_template": CHATML,
        "clean_up_tokenization_spaces": False,
    }
    for name, data in (
        ("config.json", config),
        ("generation_config.json", generation),
        ("tokenizer_config.json", tokenizer_config),
        ("special_tokens_map.json", {"bos_token": BOS, "eos_token": IM_END, "pad_token": BOS}),
    ):
        (folder / name).write_text(json.dumps(data, indent=2) + "\n")


def build(root: Path) -> TinyModel:
    """Write both formats under `root` (which must not exist yet)."""
    tokenizer = train_tokenizer()
    weights = make_weights(tokenizer)
    made = paths(root)
    root.mkdir(parents=True)
    write_hf(made.hf_dir, tokenizer, weights)
    write_gguf(made.gguf, tokenizer, weights)
    (root / "VERSION").write_text(MODEL_VERSION + "\n")
    return made


def ensure_model(cache: Path | None = None) -> TinyModel:
    """The cached model for MODEL_VERSION, made on first use (atomically, by rename)."""
    base = (cache or cache_root()) / "models"
    final = base / MODEL_VERSION
    if (final / "VERSION").is_file():
        return paths(final)
    base.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=MODEL_VERSION + ".", dir=base))
    try:
        build(staging / "model")
        try:
            (staging / "model").rename(final)
        except OSError:  # another process finished first
            if not (final / "VERSION").is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return paths(final)


if __name__ == "__main__":
    made = ensure_model()
    print(made.gguf)
    print(made.hf_dir)
