"""Targets compared level by level: each metric's difference, ratio, interval and verdict.

Input is every target's request records grouped by level and repeat (a comparison's
interleaved repeats, or one repeat per level for separate runs). For each pair (every target
against the first, the reference) and each shared level, TTFT (ms), TPS and latency (s) are
compared on their mean and P90 with `stats.difference.compare_samples`; the method is
written there. The capacity headline built on this is `analysis.capacity_delta`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from servecap.core.level_key import LevelKey
from servecap.core.records import RequestRecord
from servecap.core.request_metrics import request_metrics
from servecap.stats.bootstrap import DEFAULT_CONFIDENCE
from servecap.stats.difference import Difference, compare_samples

# metric -> higher is better
METRICS: dict[str, bool] = {"ttft_ms": False, "tps": True, "latency_s": False}
STATS: tuple[str, ...] = ("mean", "p90")
COMPARE_RESAMPLES = 500  # per repeat; enough for 95% bounds, fast for many levels

Repeats = list[list[RequestRecord]]  # repeat -> that repeat's records


@dataclass(frozen=True, slots=True)
class LevelComparison:
    """B against A at one level: `diffs[(metric, stat)]`, and whether every request succeeded."""

    level: LevelKey
    diffs: dict[tuple[str, str], Difference]
    clean_a: bool
    clean_b: bool


@dataclass(frozen=True, slots=True)
class PairComparison:
    a: str
    b: str
    levels: list[LevelComparison]
    interleaved: bool


def metric_values(records: Sequence[RequestRecord]) -> dict[str, list[float]]:
    """One value per successful request for each compared metric."""
    out: dict[str, list[float]] = {m: [] for m in METRICS}
    for record in records:
        if record.warmup:
            continue
        m = request_metrics(record)
        if m is None:
            continue
        out["ttft_ms"].append(m.ttft_ns / 1e6)
        out["latency_s"].append(m.latency_ns / 1e9)
        if m.tps is not None:
            out["tps"].append(m.tps)
    return out


def _clean(repeats: Repeats) -> bool:
    return not any(r.status == "failed" for rep in repeats for r in rep if not r.warmup)


def compare_level(
    level: LevelKey, a: Repeats, b: Repeats, *, confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = COMPARE_RESAMPLES, seed: int = 0,
) -> LevelComparison:
    """Every metric and statistic of B against A at one level."""
    values_a = [metric_values(rep) for rep in a]
    values_b = [metric_values(rep) for rep in b]
    diffs: dict[tuple[str, str], Difference] = {}
    for index, (metric, hib) in enumerate(METRICS.items()):
        for stat in STATS:
            found = compare_samples(
                [v[metric] for v in values_a], [v[metric] for v in values_b], stat,
                higher_is_better=hib, confidence=confidence, resamples=resamples,
                seed=seed * 1009 + index,
            )
            if found is not None:
                diffs[(metric, stat)] = found
    return LevelComparison(level, diffs, _clean(a), _clean(b))


def compare_pair(
    a: str, b: str, samples: Mapping[str, Mapping[LevelKey, Repeats]], *,
    interleaved: bool, confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = COMPARE_RESAMPLES, seed: int = 0,
) -> PairComparison:
    """B against A at every level both measured, in level order."""
    shared = sorted(set(samples[a]) & set(samples[b]))
    levels = [
        compare_level(
            key, samples[a][key], samples[b][key], confidence=confidence,
            resamples=resamples, seed=seed + i,
        )
        for i, key in enumerate(shared)
    ]
    return PairComparison(a, b, levels, interleaved)


def compare_targets(
    samples: Mapping[str, Mapping[LevelKey, Repeats]], *, interleaved: bool,
    confidence: float = DEFAULT_CONFIDENCE, resamples: int = COMPARE_RESAMPLES, seed: int = 0,
    pairs: Sequence[tuple[str, str]] = (),
) -> list[PairComparison]:
    """Each `(a, b)` of `pairs` (B against A), else every target against the first one."""
    names = list(samples)
    chosen = list(pairs) or [(names[0], other) for other in names[1:]]
    return [
        compare_pair(
            a, b, samples, interleaved=interleaved, confidence=confidence,
            resamples=resamples, seed=seed,
        )
        for a, b in chosen
    ]
