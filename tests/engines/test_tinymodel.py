"""The tiny test model: its vocabulary, its never-stop output head, its two formats agree."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tokenizers")
pytest.importorskip("gguf")
pytest.importorskip("safetensors")

from tests.engines import tinymodel


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tinymodel.TinyModel:
    return tinymodel.build(tmp_path_factory.mktemp("tiny") / "model")


def test_vocabulary_lands_near_four_chars_per_token(made: tinymodel.TinyModel) -> None:
    from tokenizers import Tokenizer

    from servecap.workload.prompts import build_prompts

    tokenizer = Tokenizer.from_file(str(made.tokenizer_json))
    prompts = build_prompts(128, seed=7)
    mean = sum(len(tokenizer.encode(p.text).ids) for p in prompts) / len(prompts)
    assert abs(mean - 128) <= 0.10 * 128, mean


def test_only_printable_tokens_can_win(made: tinymodel.TinyModel) -> None:
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(made.tokenizer_json))
    head = load_file(str(made.hf_dir / "model.safetensors"))["lm_head.weight"]
    live = np.abs(head).sum(axis=1) > 0
    for name in tinymodel.SPECIALS:
        assert not live[tokenizer.token_to_id(name)]
    for token_id in np.flatnonzero(live):
        assert tinymodel.generable(tokenizer.decode([int(token_id)]))
    assert live.sum() > 200


def test_gguf_holds_the_same_weights(made: tinymodel.TinyModel) -> None:
    import gguf
    from safetensors.numpy import load_file

    hf = load_file(str(made.hf_dir / "model.safetensors"))
    reader = gguf.GGUFReader(str(made.gguf))
    tensors = {t.name: np.asarray(t.data) for t in reader.tensors}
    assert np.array_equal(tensors["output.weight"], hf["lm_head.weight"])
    q = hf["model.layers.0.self_attn.q_proj.weight"]
    permuted = tensors["blk.0.attn_q.weight"]
    assert not np.array_equal(permuted, q)
    assert sorted(map(bytes, permuted)) == sorted(map(bytes, q))  # same rows, reordered


def test_cache_is_reused(tmp_path: Path) -> None:
    first = tinymodel.ensure_model(tmp_path)
    stamp = first.gguf.stat().st_mtime_ns
    assert tinymodel.ensure_model(tmp_path).gguf.stat().st_mtime_ns == stamp
