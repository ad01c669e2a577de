"""The server's view of one level: its canonical series over the level's window, as summary fields.

Gauges give a mean and a max over the scrapes inside the window; counters give the difference
between the first and the last scrape (a negative difference is a server restart: no value);
rates divide by the time between those two scrapes. Ratios prefer counters (hits / queries,
accepted / proposed) and fall back on the engine's own gauge.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

Point = tuple[int, dict[str, float]]  # (perf_counter_ns, canonical series of one scrape)

# the summary columns this module fills (LevelSummary declares them)
SERVER_FIELDS: tuple[str, ...] = (
    "server_scrapes", "server_scrape_errors",
    "server_running_mean", "server_running_max",
    "server_waiting_mean", "server_waiting_max", "server_waiting_share",
    "server_kv_usage_mean", "server_kv_usage_max",
    "server_preemptions", "server_prefix_hit_rate",
    "server_spec_acceptance", "server_spec_accept_length",
    "server_prompt_tok_s", "server_generation_tok_s",
    "server_ttft_mean_ms", "server_itl_mean_ms",
)


def _gauge(points: Sequence[Point], name: str) -> list[float]:
    return [series[name] for _, series in points if name in series]


def _delta(points: Sequence[Point], name: str) -> tuple[float, float] | None:
    """(difference, seconds) between the first and last scrape holding `name`."""
    held = [(t, series[name]) for t, series in points if name in series]
    if len(held) < 2:
        return None
    (t0, v0), (t1, v1) = held[0], held[-1]
    if v1 < v0 or t1 <= t0:
        return None
    return v1 - v0, (t1 - t0) / 1e9


def _ratio(points: Sequence[Point], num: str, den: str) -> float | None:
    top, bottom = _delta(points, num), _delta(points, den)
    if top is None or bottom is None or bottom[0] <= 0:
        return None
    return top[0] / bottom[0]


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _rate(points: Sequence[Point], name: str) -> float | None:
    delta = _delta(points, name)
    return delta[0] / delta[1] if delta else None


def _gauges(points: Sequence[Point]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("running", "waiting", "kv_usage"):
        values = _gauge(points, name)
        if values:
            out[f"server_{name}_mean"] = _mean(values)
            out[f"server_{name}_max"] = max(values)
    waiting = _gauge(points, "waiting")
    if waiting:
        out["server_waiting_share"] = sum(1 for v in waiting if v > 0) / len(waiting)
    return out


def _spec(points: Sequence[Point]) -> dict[str, Any]:
    acceptance = _ratio(points, "spec_accepted_tokens", "spec_draft_tokens")
    if acceptance is None:
        acceptance = _mean(_gauge(points, "spec_acceptance"))
    accepted = _ratio(points, "spec_accepted_tokens", "spec_drafts")
    # a step emits its accepted drafts plus the one token the target model adds
    length = 1.0 + accepted if accepted is not None else _mean(_gauge(points, "spec_accept_length"))
    return {"server_spec_acceptance": acceptance, "server_spec_accept_length": length}


def server_fields(
    points: Sequence[Point], errors: int = 0, inside: Sequence[Point] | None = None
) -> dict[str, Any]:
    """The level's server columns from its scrapes (in time order).

    `points` may reach one scrape past each edge of the level, so counter differences span
    all of it; gauges come from `inside` (the scrapes within the level) where given."""
    gauge_points = inside if inside else points
    out: dict[str, Any] = {"server_scrapes": len(gauge_points), "server_scrape_errors": errors}
    if not points:
        return out
    out.update(_gauges(gauge_points))
    preempted = _delta(points, "preemptions")
    hit_rate = _ratio(points, "prefix_hits", "prefix_queries")
    ttft = _ratio(points, "ttft_sum_s", "ttft_count")
    itl = _ratio(points, "itl_sum_s", "itl_count")
    out.update(
        server_preemptions=preempted[0] if preempted else None,
        server_prefix_hit_rate=(
            hit_rate if hit_rate is not None else _mean(_gauge(points, "prefix_hit_rate"))
        ),
        server_prompt_tok_s=_rate(points, "prompt_tokens"),
        server_generation_tok_s=_rate(points, "generation_tokens"),
        server_ttft_mean_ms=ttft * 1000.0 if ttft is not None else None,
        server_itl_mean_ms=itl * 1000.0 if itl is not None else None,
        **_spec(points),
    )
    return {k: v for k, v in out.items() if v is not None}
