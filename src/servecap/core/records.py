"""Raw per-request records: what the client saw, stamped in `perf_counter_ns`.

These are the rows of `requests.jsonl`. Everything else (level summaries, capacity, reports)
is derived from them, so they hold raw timestamps, never derived metrics.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from servecap.core.level_key import LevelKey, key_fields, key_from_fields

RequestStatus = Literal["ok", "failed", "cancelled"]
TokenSource = Literal["usage", "estimated"]

# Failure reasons, as DESIGN.md lists them. A failed record carries exactly one.
FAILURE_REASONS: tuple[str, ...] = (
    "connect_refused",
    "dns_error",
    "tls_verify_failed",
    "tls_handshake_failed",
    "connect_error",
    "server_disconnected",
    "redirect",
    "http_4xx",
    "http_5xx",
    "rate_limited",
    "header_timeout",
    "stream_stall",
    "total_timeout",
    "stream_truncated",
    "malformed_sse",
    "unexpected_content_type",
    "server_error_in_stream",
    "response_too_large",
    "empty_response",
    "cancelled",
    "client_error",
)


# Fields another load kind added: left out of a row that does not use them.
_OMIT_WHEN_NONE: tuple[str, ...] = ("level", "user", "conversation", "turn", "think_before_s",
                                     "think_after_s", "admitted_at", "connect_ms",
                                     "cached_tokens", "depth", "tool_call", "tool_wait_s",
                                     "appended_tokens", "compaction", "sub_agent")


@dataclass(slots=True)
class RequestRecord:
    """One request, from scheduling to the end of its stream.

    `chunk_at` holds the arrival of every token-bearing chunk (content, reasoning or tool-call
    delta). `chunk_tokens` holds each such chunk's token delta when the server reports per-chunk
    usage, else it is empty and metrics spread the total evenly over the chunks.

    The level a record belongs to is its `key`: a closed-loop row stores it as `concurrency`
    (the file format from before keys existed), any other kind as `level` (the key's text,
    `concurrency` then 0).
    """

    request_id: int
    concurrency: int
    stream_index: int
    scheduled_at: int
    sent_at: int | None = None
    first_byte_at: int | None = None
    first_token_at: int | None = None
    first_answer_at: int | None = None
    last_token_at: int | None = None
    ended_at: int | None = None
    chunk_at: list[int] = field(default_factory=list)
    chunk_tokens: list[int] = field(default_factory=list)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    # Prompt tokens the server's prefix cache served, from its usage
    # (`prompt_tokens_details.cached_tokens`); None where the server does not say.
    cached_tokens: int | None = None
    token_source: TokenSource = "estimated"
    status: RequestStatus = "ok"
    reason: str | None = None
    http_status: int | None = None
    detail: str | None = None
    output_chars: int = 0
    finish_reason: str | None = None
    warmup: bool = False
    reconnects: int = 0
    # the stream ended on finish_reason without the `data: [DONE]` line (still a success)
    missing_done: bool = False
    # invalid UTF-8 sequences the SSE decoder replaced with U+FFFD in this stream
    utf8_replaced: int = 0
    # The engine's own timing of this request where it sends one (llama-server's `timings`:
    # prompt_ms, predicted_ms, predicted_per_token_ms, ...); numbers only, kept for cross-checks.
    server_timings: dict[str, float] | None = None
    level: str | None = None
    # The client's own delay inside this TTFT and latency, ms, from the socket's kernel
    # clock: writing the request after sent_at, plus how old the bytes already were when
    # the first token or the end was stamped (the larger; client.stamp_age: a lower bound at
    # kernel-tick resolution; None where unknown).
    client_delay_ms: float | None = None
    # What the request asked for: the prompt length it was built to hold and its max_tokens
    # (the served lengths are `prompt_tokens`/`completion_tokens`); None in older runs.
    input_tokens_sent: int | None = None
    max_tokens_sent: int | None = None
    # Sessions: the virtual user, its conversation (from 0), the turn in it (from 1), the
    # think time drawn before this turn (None for a user's first request, after its start offset)
    # and the one drawn after it (known even when the level ends before the next turn).
    user: int | None = None
    conversation: int | None = None
    turn: int | None = None
    think_before_s: float | None = None
    think_after_s: float | None = None
    # Open loop: when a full max-concurrency cap let this request go (None: it never
    # waited), so the cap's share of `sent_at - scheduled_at` is known, not hidden.
    admitted_at: int | None = None
    # Opening a new connection (TCP, then TLS) before this request could be written, ms:
    # inside `sent_at - scheduled_at`, not the client's lag (None: a pooled one was reused).
    connect_ms: float | None = None
    # Agents (`kinds.agents`): `user` is the agent, `conversation` its task (from 0) and
    # `turn` the call in it (from 1); `depth` is the task's drawn number of tool calls (its
    # last call, depth + 1, is the final answer); `tool_call` says who asked for the tool
    # this call ended with ("server": its own `tool_calls`, "drawn": the depth said so);
    # `tool_wait_s` the drawn tool latency after it; `appended_tokens` what the agent added
    # to the context since its previous call (that call's output plus the tool result).
    depth: int | None = None
    tool_call: str | None = None
    tool_wait_s: float | None = None
    appended_tokens: int | None = None
    # the extra call that compacted the context past its budget (before call `turn`)
    compaction: bool | None = None
    # a call of the task's sub-agent `sub_agent` (from 1; None: the task's own chain)
    sub_agent: int | None = None

    @classmethod
    def for_level(
        cls, key: LevelKey, request_id: int, stream_index: int, scheduled_at: int,
        warmup: bool = False,
    ) -> RequestRecord:
        """A fresh record of level `key`, stamped as scheduled at `scheduled_at`."""
        fields_ = key_fields(key)
        return cls(
            request_id=request_id,
            concurrency=fields_.get("concurrency", 0),
            stream_index=stream_index,
            scheduled_at=scheduled_at,
            warmup=warmup,
            level=fields_.get("level"),
        )

    @property
    def key(self) -> LevelKey:
        return key_from_fields(self.concurrency, self.level)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def output_tokens(self) -> int:
        """Output tokens: server usage when present, else the estimate the client made."""
        return self.completion_tokens or 0

    def to_dict(self) -> dict[str, Any]:
        """The row as a dict; its lists and dicts are the record's own, not copies (a row
        is serialised as it is written: `dataclasses.asdict` deep-copied all 128 chunk
        stamps of a request, a fifth of the client's CPU at its ceiling)."""
        data = {name: getattr(self, name) for name in _FIELD_NAMES}
        for name in _OMIT_WHEN_NONE:  # closed-loop rows keep the format they always had
            if data[name] is None:
                del data[name]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RequestRecord:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(RequestRecord))


@dataclass(frozen=True, slots=True)
class ClientHealth:
    """How the load generator itself fared during a level (it must keep up to be valid)."""

    loop_lag_p99_ms: float
    client_cpu_pct: float
    client_bound: bool
