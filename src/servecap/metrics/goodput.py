"""Goodput of one level: the requests a second that met every per-request SLO.

DistServe's definition (Zhong et al., OSDI'24): a request counts only if it succeeded AND
met every per-request objective, here TTFT (from the request's target time where it has
one, i.e. what its user waited) at most `slo.ttft_ms` and its TPS at least `slo.tps`.
A failure is a miss. Goodput = the level's offered rate x the fraction of its requests that
met the SLOs (its SLO attainment), over the level's steady-state window: the rate of
requests that met them, without the noise of a short window's own arrival count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from servecap.core.config import SLO
from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.request_metrics import request_metrics
from servecap.kinds.registry import kind_of
from servecap.kinds.window import Window, apply_window

NS_PER_MS = 1e6


@dataclass(frozen=True, slots=True)
class Goodput:
    n_requests: int
    n_good: int
    goodput_rps: float | None

    @property
    def attainment(self) -> float | None:
        """The fraction of requests that met every per-request SLO."""
        return self.n_good / self.n_requests if self.n_requests else None


def meets_slo(record: RequestRecord, slo: SLO) -> bool:
    """Did this one request succeed within both per-request objectives?"""
    metrics = request_metrics(record)
    if metrics is None or metrics.tps is None:
        return False
    assert record.first_token_at is not None
    ttft_ms = (record.first_token_at - record.scheduled_at) / NS_PER_MS
    return ttft_ms <= slo.ttft_ms and metrics.tps >= slo.tps


def level_goodput(records: Sequence[RequestRecord], rate_rps: float | None, slo: SLO) -> Goodput:
    """Goodput of a level's (windowed) records sent at `rate_rps` requests a second."""
    good = sum(1 for record in records if meets_slo(record, slo))
    if not records or rate_rps is None:
        return Goodput(len(records), good, None)
    return Goodput(len(records), good, rate_rps * good / len(records))


def goodput_by_level(
    records: Iterable[RequestRecord], windows: Mapping[str, Window], slo: SLO
) -> dict[LevelKey, Goodput]:
    """Goodput of each level that offers a rate (its kind says), over its kind's window
    (`windows` by kind name)."""
    by_level: dict[LevelKey, list[RequestRecord]] = {}
    for record in records:
        if not record.warmup:
            by_level.setdefault(record.key, []).append(record)
    out: dict[LevelKey, Goodput] = {}
    for key, rows in sorted(by_level.items()):
        kind = kind_of(key)
        rate = kind.offered_rate(key)
        if rate is None:
            continue
        window = windows.get(kind.name)
        kept = apply_window(rows, window).kept if window is not None else rows
        out[key] = level_goodput(kept, rate, slo)
    return out
