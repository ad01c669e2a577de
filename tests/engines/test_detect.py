"""Engine detection from what servers say about themselves (pure; no engine needed)."""

from __future__ import annotations

from servecap.client.chunks import ChunkReader
from servecap.client.server_info import detect_engine
from servecap.core.records import RequestRecord


def test_llama_cpp_props() -> None:
    info = {"props": {"build_info": "b1-abc", "total_slots": 8, "model_path": "/m/tiny.gguf",
                      "default_generation_settings": {"n_ctx": 512}}}
    assert detect_engine(info) == {"name": "llama.cpp", "version": "b1-abc",
                                   "model_path": "/m/tiny.gguf", "total_slots": 8,
                                   "n_ctx_per_slot": 512}


def test_sglang_server_info() -> None:
    info = {"get_server_info": {"version": "0.4.1", "tp_size": 2, "model_path": "m",
                                "chunked_prefill_size": 8192, "unrelated": 1}}
    engine = detect_engine(info)
    assert engine == {"name": "sglang", "version": "0.4.1", "tp_size": 2, "model_path": "m",
                      "chunked_prefill_size": 8192}


def test_vllm_version_and_simulator_are_told_apart() -> None:
    assert detect_engine({"version": {"version": "0.9.2"}}) == {"name": "vllm",
                                                                "version": "0.9.2"}
    sim = detect_engine({"version": {"version": "1", "server": "servecap-sim", "profile": "p"}})
    assert sim == {"name": "servecap-sim", "version": "1", "profile": "p"}


def test_ollama_and_unknown() -> None:
    assert detect_engine({"api/version": {"version": "0.5.7"}}) == {"name": "ollama",
                                                                     "version": "0.5.7"}
    assert detect_engine({"models": ["x"], "header_server": "uvicorn"}) is None


def test_final_chunk_timings_are_kept_as_numbers_only() -> None:
    record = RequestRecord(1, 1, 0, 0)
    reader = ChunkReader(record, chat=True)
    reader.feed("", '{"choices":[{"delta":{"content":"a"}}]}', 10)
    reader.feed("", '{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1},'
                    '"timings":{"predicted_ms":5.5,"predicted_n":1,"x":"<b>","y":true}}', 20)
    assert record.server_timings == {"predicted_ms": 5.5, "predicted_n": 1.0}
    assert record.to_dict()["server_timings"]["predicted_ms"] == 5.5
