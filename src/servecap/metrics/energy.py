"""Energy at a level: mean power, joules and joules per output token, from a DCGM exporter.

The exporter's `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` (mJ, a counter per GPU) and
`DCGM_FI_DEV_POWER_USAGE` (W, a gauge per GPU) are summed over GPUs at each scrape. A level's
token window runs from its first request's first token to its last request's last token;
its energy is the counter, interpolated linearly between scrapes, at the window's end minus
at its start, so energy and tokens cover the same interval (MLPerf's rule). That needs a
reading at or before the first token and one at or after the last: without them the level
says why instead of a number (e.g. "power scrape started 2.1 s after the level's first
token"). J per output token divides by every output token the level's requests received;
mean power is energy / the window's length, and the mean of the W samples inside the
window is kept beside it. Pure: readings and records in, a dict out (the summary's `energy`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from servecap.core.records import RequestRecord

POWER = "DCGM_FI_DEV_POWER_USAGE"
ENERGY = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
POWER_WINDOW = "power_window"  # the observer's raw readings, turned into `energy` here

Reading = tuple[int, float | None, float | None]  # t_ns, W (all GPUs), J (all GPUs)


def reading(t_ns: int, samples: dict[str, float]) -> tuple[Reading, int]:
    """One scrape's (t, W, J) summed over GPUs, and how many GPUs reported energy."""
    watts = [v for k, v in samples.items() if k.split("{", 1)[0] == POWER]
    # prometheus_client's parser names a counter's samples `<family>_total`
    millijoules = [v for k, v in samples.items()
                   if k.split("{", 1)[0] in (ENERGY, f"{ENERGY}_total")]
    return (t_ns, sum(watts) if watts else None,
            sum(millijoules) / 1000 if millijoules else None), len(millijoules)


def counter_at(points: Sequence[tuple[int, float]], t: int) -> float:
    """The counter at `t`, linear between the readings around it (`t` within them)."""
    for (t0, e0), (t1, e1) in zip(points, points[1:], strict=False):
        if t0 <= t <= t1:
            return e0 if t1 == t0 else e0 + (e1 - e0) * (t - t0) / (t1 - t0)
    return points[-1][1] if t == points[-1][0] else points[0][1]


def token_window(rows: Sequence[RequestRecord]) -> tuple[int, int, int] | None:
    """(first token, last token, output tokens) of the level's requests; None: no token."""
    firsts = [r.first_token_at for r in rows if r.first_token_at is not None]
    lasts = [r.last_token_at for r in rows if r.last_token_at is not None]
    if not firsts or not lasts:
        return None
    return min(firsts), max(lasts), sum(r.completion_tokens or 0 for r in rows)


def _uncovered(points: Sequence[tuple[int, float]], t0: int, t1: int,
               errors: Sequence[Sequence[Any]]) -> str | None:
    """Why the readings do not cover [t0, t1], or None when they do."""
    failed = sorted({str(e[1]) for e in errors})
    why = f" (power endpoint errors: {', '.join(failed)})" if failed else ""
    if not points:
        return f"no energy reading during the level{why}"
    if points[0][0] > t0:
        return (f"scrape started {(points[0][0] - t0) / 1e9:.1f} s after the level's first "
                f"token{why}")
    if points[-1][0] < t1:
        return (f"scrapes ended {(t1 - points[-1][0]) / 1e9:.1f} s before the level's last "
                f"token{why}")
    return None


def level_energy(window: dict[str, Any], rows: Sequence[RequestRecord]) -> dict[str, Any]:
    """The summary's `energy` block from the observer's readings and the level's records."""
    tokens = token_window(rows)
    errors = window.get("errors") or []
    readings: list[Reading] = [(int(p[0]), p[1], p[2]) for p in window.get("points") or []]
    base: dict[str, Any] = {"scrapes": len(readings), "errors": len(errors),
                            "gpus": window.get("gpus")}
    if tokens is None:
        return {**base, "note": "no output token in the level"}
    t0, t1, n = tokens
    points = [(t, j) for t, _, j in readings if j is not None]
    note = _uncovered(points, t0, t1, errors)
    if note is not None:
        return {**base, "output_tokens": n, "note": note}
    joules = counter_at(points, t1) - counter_at(points, t0)
    if joules < 0:
        return {**base, "output_tokens": n, "note": "the energy counter went backwards (reset)"}
    seconds = (t1 - t0) / 1e9
    inside = [w for t, w, _ in readings if w is not None and t0 <= t <= t1]
    return {
        **base, "output_tokens": n, "energy_j": joules, "window_s": seconds,
        "power_mean_w": joules / seconds if seconds > 0 else None,
        "power_samples_mean_w": sum(inside) / len(inside) if inside else None,
        "j_per_output_token": joules / n if n else None, "from_ns": t0, "to_ns": t1,
    }


def energy_at(levels: Sequence[Any], top: Any) -> dict[str, dict[str, Any]] | None:
    """The energy block at C_max (`top`, the highest level within the SLOs) and at peak
    throughput (the level of the highest output tok/s), each with its level; None when no
    level was measured with `--power-metrics`."""
    if not any(lv.energy for lv in levels):
        return None
    rated = [lv for lv in levels if lv.output_tok_s is not None and not lv.partial]
    peak = max(rated, key=lambda lv: lv.output_tok_s, default=None)
    out: dict[str, dict[str, Any]] = {}
    for label, level in (("C_max", next((lv for lv in levels if lv.key == top), None)),
                         ("peak throughput", peak)):
        if level is not None and level.energy:
            out[label] = {"level": str(level.key), **level.energy}
    return out
