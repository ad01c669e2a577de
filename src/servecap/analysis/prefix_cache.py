"""The prefix-cache table of one run, per level: the hit rate the prompts were built for, the
one the server served by its usage and by its /metrics, whether the two agree, and the
reset before the level. One builder for `plan`, the report and the app, so all three say
the same; a run without prefix-cache figures has no table (None)."""

from __future__ import annotations

from collections.abc import Sequence

from servecap.core.numbers import fmt_number
from servecap.core.summary import LevelSummary
from servecap.kinds.base import KindTable
from servecap.metrics.prefix_hits import DISAGREE_BY, TARGET_BY

HEADER = ["level", "built for %", "ideal %", "served by usage %", "served by /metrics %",
          "requests reporting", "agree", "reset"]
NOTE = (f"Usage and /metrics are called apart when they differ by more than {DISAGREE_BY} of "
        "the prompt tokens: /metrics also counts the lookups of failed, cancelled and "
        "retried requests. A built hit rate is met when served within "
        f"{TARGET_BY} of its ideal (the share whole tokens allow; the first request on each "
        "shared prefix misses in an empty cache).")


def _pct(value: float | None) -> str:
    return fmt_number(value * 100.0 if value is not None else None, 1)


def _has_prefix(level: LevelSummary) -> bool:
    return any(v is not None for v in (level.prefix_hit_rate_usage, level.prefix_hit_target,
                                       level.prefix_cache_reset))


def _agree(level: LevelSummary) -> str:
    usage, server = level.prefix_hit_rate_usage, level.server_prefix_hit_rate
    if usage is None or server is None:
        return "-"
    return "yes" if abs(usage - server) <= DISAGREE_BY else "NO"


def _row(level: LevelSummary) -> list[str]:
    return [
        str(level.key), _pct(level.prefix_hit_target), _pct(level.prefix_hit_ideal),
        _pct(level.prefix_hit_rate_usage), _pct(level.server_prefix_hit_rate),
        fmt_number(level.prefix_cached_requests, 0), _agree(level),
        level.prefix_cache_reset or "off",
    ]


def prefix_table(name: str, levels: Sequence[LevelSummary]) -> KindTable | None:
    """The run's prefix-cache table, or None when no level has prefix-cache figures."""
    if not any(_has_prefix(level) for level in levels):
        return None
    rows = [_row(level) for level in sorted(levels, key=lambda lv: lv.key)]
    return KindTable(f"{name}: the prefix cache per level", list(HEADER), rows, NOTE)
