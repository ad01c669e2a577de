"""Where `--reset-prefix-cache` posts: by the detected engine (auto), as given, or nowhere."""

from __future__ import annotations

import pytest

from servecap.client.cache_reset import reset_target

BASE = "http://gpu:8000/v1"


@pytest.mark.parametrize(("engine", "url"), [
    ("vllm", "http://gpu:8000/reset_prefix_cache"),
    ("sglang", "http://gpu:8000/flush_cache"),
    ("servecap-sim", "http://gpu:8000/reset_prefix_cache"),
])
def test_auto_picks_the_engines_endpoint(engine: str, url: str) -> None:
    target = reset_target("auto", BASE, engine)
    assert target.url == url and target.note == f"auto: POST {url} ({engine})"


@pytest.mark.parametrize("engine", ["llama.cpp", "ollama", None])
def test_auto_without_a_known_endpoint_resets_nothing_and_says_so(engine: str | None) -> None:
    target = reset_target("auto", BASE, engine)
    assert target.url is None
    assert target.note.startswith("auto: no reset, the server (") and "sglang" in target.note


def test_off_and_a_given_url() -> None:
    assert reset_target("off", BASE, "vllm").url is None
    given = reset_target("http://u:secret@gpu:9000/flush?key=abc", BASE, None)
    assert given.url == "http://u:secret@gpu:9000/flush?key=abc"  # as given, to post to
    assert "secret" not in given.note and "abc" not in given.note  # never in run.json
