"""Usage's `prompt_tokens_details.cached_tokens` lands on the record; garbage does not."""

from __future__ import annotations

import json
from typing import Any

import pytest

from servecap.client.chunks import ChunkReader
from servecap.core.records import RequestRecord


def _read(usage: dict[str, Any]) -> RequestRecord:
    record = RequestRecord(request_id=0, concurrency=1, stream_index=0, scheduled_at=0)
    reader = ChunkReader(record, chat=False)
    reader.feed("", json.dumps({"choices": [{"text": "hi", "finish_reason": "length"}]}), 5)
    reader.feed("", json.dumps({"choices": [], "usage": usage}), 6)
    reader.feed("", "[DONE]", 7)
    reader.finish(8)
    return record


def test_cached_tokens_from_usage() -> None:
    usage = {"prompt_tokens": 100, "completion_tokens": 1,
             "prompt_tokens_details": {"cached_tokens": 64}}
    record = _read(usage)
    assert (record.prompt_tokens, record.cached_tokens) == (100, 64)
    assert record.to_dict()["cached_tokens"] == 64


@pytest.mark.parametrize("details", [None, {}, {"cached_tokens": -3}, {"cached_tokens": "9"},
                                     "64", {"cached_tokens": 1.5}])
def test_missing_or_garbage_cached_tokens_is_none(details: Any) -> None:
    usage: dict[str, Any] = {"prompt_tokens": 100, "completion_tokens": 1}
    if details is not None:
        usage["prompt_tokens_details"] = details
    record = _read(usage)
    assert record.cached_tokens is None
    assert "cached_tokens" not in record.to_dict()  # rows keep their old format
