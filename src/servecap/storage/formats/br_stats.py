"""The pieces of an llm-d Benchmark Report (BR v0.2.1) that are plain numbers and times.

A BR `Statistics` block holds a mean, a standard deviation and a fixed set of percentiles
(`p0p1` is the 0.1th, `p99p9` the 99.9th), all in one unit from the schema's `Units` enum.
Percentiles here interpolate linearly, as servecap's own (`stats.percentiles.describe`), so a
partial's p50/p90/p99 of TTFT equal the level summary's. BR percentiles are plain ones: the
p10 of a rate is its 10th percentile, never servecap's "tail" convention.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

# BR name -> percentile (the schema's `Statistics` properties)
PERCENTILES: dict[str, float] = {
    "min": 0.0, "p0p1": 0.1, "p1": 1.0, "p5": 5.0, "p10": 10.0, "p25": 25.0, "p50": 50.0,
    "p75": 75.0, "p90": 90.0, "p95": 95.0, "p99": 99.0, "p99p9": 99.9, "max": 100.0,
}


def statistics(values: Sequence[float], units: str) -> dict[str, Any] | None:
    """A BR `Statistics` block of `values` (None when there are none: BR needs a mean).

    `stddev` is the population standard deviation (ddof 0), so one value gives 0, not NaN."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return None
    points = np.percentile(arr, list(PERCENTILES.values()), method="linear")
    block: dict[str, Any] = {"units": units, "mean": float(arr.mean()),
                             "stddev": float(arr.std())}
    block.update({name: float(v) for name, v in zip(PERCENTILES, points, strict=True)})
    return block


def one_value(value: float | None, units: str) -> dict[str, Any] | None:
    """A `Statistics` block for a quantity measured once per level (a rate): its mean only."""
    return None if value is None else {"units": units, "mean": float(value)}


def iso_time(wall_ns: int) -> str:
    """An ISO-8601 UTC timestamp (`...Z`) of a wall-clock time in ns since the epoch."""
    moment = datetime.fromtimestamp(wall_ns / 1e9, tz=UTC)
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z")


def iso_duration(seconds: float) -> str:
    """An ISO-8601 duration in seconds (`PT12.5S`), as BR's own example writes one."""
    return f"PT{seconds:.6f}S"


def strip_nulls(value: Any) -> Any:
    """`value` without None members or empty objects, at any depth.

    A partial says only what it knows: a null would overwrite another partial's value when
    the two are deep-merged, and an empty object is a null's cousin."""
    if isinstance(value, dict):
        out = {k: strip_nulls(v) for k, v in value.items() if v is not None}
        return {k: v for k, v in out.items() if v != {} and v is not None}
    if isinstance(value, list):
        return [strip_nulls(v) for v in value if v is not None]
    return value
