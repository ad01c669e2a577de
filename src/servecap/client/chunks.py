"""Interpret the JSON chunks of an OpenAI-compatible stream into a RequestRecord.

A token-bearing chunk carries content, reasoning (`reasoning_content` or `reasoning`) or a
tool-call delta; a role-only or empty chunk is not a token. Usage may arrive on its own
final chunk (`include_usage`), on every chunk (`continuous_usage_stats`) or on the
finish chunk (some servers, whatever is asked).
"""

from __future__ import annotations

from typing import Any

import orjson

from servecap.client.failures import fail
from servecap.core.records import RequestRecord
from servecap.core.text import clean_text
from servecap.workload.tools import ToolCallLog

DONE = "[DONE]"


class ChunkReader:
    """Per-request state while reading a stream; `feed` runs once per SSE event."""

    __slots__ = ("answer", "chat", "done", "last_completion_tokens", "record", "tool_log")

    def __init__(
        self, record: RequestRecord, chat: bool, answer: list[str] | None = None,
        tool_log: ToolCallLog | None = None,
    ) -> None:
        self.record = record
        self.chat = chat
        self.answer = answer  # collects the answer's content when a caller needs the text
        self.tool_log = tool_log  # collects its tool calls when the caller is an agent
        self.done = False
        self.last_completion_tokens = 0

    def feed(self, event: str, data: str, arrived_at: int) -> None:
        """Apply one SSE event that arrived at `arrived_at` (perf_counter_ns)."""
        if data == DONE:
            self.done = True
            return
        try:
            chunk = orjson.loads(data)
        except orjson.JSONDecodeError:
            fail(self.record, "malformed_sse", f"non-JSON data line: {data[:120]!r}")
            return
        if type(chunk) is not dict:  # JSON objects load as exactly dict
            fail(self.record, "malformed_sse", "data line is not a JSON object")
            return
        if event == "error" or chunk.get("error"):
            fail(self.record, "server_error_in_stream", _error_text(chunk))
            return
        usage = chunk.get("usage")
        choices = chunk.get("choices")
        if choices and type(choices) is list and type(choices[0]) is dict:
            self._choice(choices[0], usage, arrived_at)
        if type(usage) is dict:
            self._usage(usage)
        timings = chunk.get("timings")
        if type(timings) is dict:
            self.record.server_timings = _numbers(timings)

    def _choice(self, choice: dict[str, Any], usage: Any, arrived_at: int) -> None:
        # once a chunk: plain type checks (JSON loads exact types) in place of helpers
        if self.chat:
            delta = choice.get("delta")
            if type(delta) is not dict:
                return self._finish_reason(choice)  # a hostile or broken server: no token
            content = delta.get("content")
            if type(content) is not str:
                content = None
            reasoning = delta.get("reasoning_content")
            if type(reasoning) is not str or not reasoning:
                other = delta.get("reasoning")
                reasoning = other if type(other) is str else None
            tools = delta.get("tool_calls")
            if tools and self.tool_log is not None:
                self.tool_log.add(tools)
        else:
            content = choice.get("text")
            if type(content) is not str:
                content = None
            reasoning = tools = None
        if content or reasoning or tools:
            self._token(content, reasoning, usage, arrived_at)
        finish = choice.get("finish_reason")
        if finish:
            self.record.finish_reason = clean_text(str(finish)[:100])  # server text
        return None

    def _token(self, content: str | None, reasoning: str | None, usage: Any,
               arrived_at: int) -> None:
        record = self.record
        if record.first_token_at is None:
            record.first_token_at = arrived_at
        if content and record.first_answer_at is None:
            record.first_answer_at = arrived_at
        record.last_token_at = arrived_at
        record.chunk_at.append(arrived_at)
        record.output_chars += len(content or "") + len(reasoning or "")
        if content and self.answer is not None:
            self.answer.append(content)
        if type(usage) is dict and _count(usage.get("completion_tokens")):
            tokens = usage["completion_tokens"]
            if tokens >= self.last_completion_tokens:  # a count that goes back is no count
                record.chunk_tokens.append(tokens - self.last_completion_tokens)
                self.last_completion_tokens = tokens

    def _finish_reason(self, choice: dict[str, Any]) -> None:
        finish = choice.get("finish_reason")
        if finish:
            self.record.finish_reason = clean_text(str(finish)[:100])  # server text

    def _usage(self, usage: dict[str, Any]) -> None:
        prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
        if _count(prompt):
            self.record.prompt_tokens = prompt
        if _count(completion):
            self.record.completion_tokens = completion
            self.record.token_source = "usage"
        details = usage.get("prompt_tokens_details")
        if type(details) is dict and _count(details.get("cached_tokens")):
            self.record.cached_tokens = details["cached_tokens"]

    def finish(self, prompt_chars: int) -> None:
        """Close the record when the stream ends: tokens, estimates and truncation checks."""
        record = self.record
        if len(record.chunk_tokens) != len(record.chunk_at):
            record.chunk_tokens.clear()  # per-chunk usage was partial: spread evenly instead
        if record.completion_tokens is None:
            record.completion_tokens = len(record.chunk_at)
            record.token_source = "estimated"
        if record.prompt_tokens is None:
            record.prompt_tokens = max(1, -(-prompt_chars // 4))
        if record.status != "ok":
            return
        if not self.done and record.finish_reason is None:
            fail(record, "stream_truncated", "stream ended without finish_reason or [DONE]")
            return
        if not record.chunk_at:
            fail(record, "empty_response", "no content, reasoning or tool-call tokens")
            return
        record.missing_done = not self.done  # ended on finish_reason alone: counted, kept


MAX_USAGE_TOKENS = 100_000_000


def _count(value: Any) -> bool:
    """A token count a server may report: an integer in 0..1e8. A negative (or absurd) one is
    garbage that would make TPS negative: ignored, so the count is estimated instead."""
    return type(value) is int and 0 <= value <= MAX_USAGE_TOKENS


def _error_text(chunk: dict[str, Any]) -> str:
    error = chunk.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or error)[:300]
    return str(error)[:300]


def _numbers(values: dict[str, Any]) -> dict[str, float]:
    """A server's timing object cut to numeric fields (at most 20), nothing else kept."""
    kept: dict[str, float] = {}
    for key, value in list(values.items())[:20]:
        if isinstance(value, int | float) and not isinstance(value, bool):
            kept[clean_text(str(key)[:50])] = float(value)
    return kept
