"""A level's prefix-cache hit rate by the server's usage, beside the one its /metrics gave.

- By usage: the cached prompt tokens the server reported per request
  (`prompt_tokens_details.cached_tokens`) over those requests' prompt tokens, successful
  requests only (`prefix_hit_rate_usage`; `prefix_cached_requests` says how many reported).
- By /metrics: `server_prefix_hit_rate` (`metrics.server_view`: hits / queries over the level).
- The two count differently: /metrics counts every request the engine admitted, failed and
  cancelled ones too, and an engine may count a lookup again when a waiting request retries
  (vLLM); usage counts only what came back. So they are compared with a margin,
  `DISAGREE_BY`, and a wider gap is the level's warning: one of the two is not what it seems.
- With a built hit rate (`--prefix-hit-rate`) the served rate is checked against the one the
  prompts were built for (`prefix_hit_ideal`) with the issue's tolerance, `TARGET_BY`, and a
  miss is a warning: validated, not assumed.
- A reset that failed or was skipped (`prefix_cache_reset`) is a warning too, never a failure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from servecap.core.records import RequestRecord

# 0.05 of the prompt tokens: wider than what /metrics' own extra counting (failed, cancelled
# and retried lookups) moves on a level of ordinary size, narrow enough to catch a server
# whose usage and counters mean different things (block-floored vs per-token counts)
DISAGREE_BY = 0.05
# the tolerance issue 51 asks a built hit rate to be served within
TARGET_BY = 0.03

FIELDS: tuple[str, ...] = ("prefix_hit_rate_usage", "prefix_cached_requests")


def usage_hit_rate(rows: Sequence[RequestRecord]) -> tuple[float | None, int]:
    """(cached / prompt tokens over the successful requests that reported both, how many)."""
    reported = [r for r in rows if r.ok and r.cached_tokens is not None and r.prompt_tokens]
    prompt = sum(r.prompt_tokens or 0 for r in reported)
    cached = sum(r.cached_tokens or 0 for r in reported)
    return (cached / prompt if prompt else None), len(reported)


def prefix_fields(rows: Sequence[RequestRecord], observed: Mapping[str, Any]) -> dict[str, Any]:
    """The level's usage hit rate and its prefix-cache warnings (`warnings`, a list)."""
    rate, reported = usage_hit_rate(rows)
    out: dict[str, Any] = {}
    if reported:
        out.update(prefix_hit_rate_usage=rate, prefix_cached_requests=reported)
    out["warnings"] = prefix_warnings(rate, observed)
    return out


def prefix_warnings(usage: float | None, observed: Mapping[str, Any]) -> list[str]:
    """What is wrong with the level's prefix cache figures, one line each."""
    notes: list[str] = []
    reset = observed.get("prefix_cache_reset")
    if isinstance(reset, str) and reset != "done":
        notes.append(f"prefix cache reset before the level {reset}")
    server = observed.get("server_prefix_hit_rate")
    if usage is not None and isinstance(server, float) and abs(usage - server) > DISAGREE_BY:
        notes.append(f"prefix hit rate: usage says {usage:.3f}, /metrics {server:.3f} "
                     f"(apart by more than {DISAGREE_BY})")
    ideal = observed.get("prefix_hit_ideal")
    served = server if isinstance(server, float) else usage
    if isinstance(ideal, float) and served is not None and abs(served - ideal) > TARGET_BY:
        notes.append(f"prefix hit rate served {served:.3f}, prompts built for {ideal:.3f} "
                     f"(apart by more than {TARGET_BY})")
    return notes
