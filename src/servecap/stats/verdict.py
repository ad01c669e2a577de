"""SLO verdicts that carry their uncertainty: pass, fail or undecided.

A metric's verdict compares its bootstrap interval (`stats.bootstrap.Interval`) with the SLO
threshold. Lower-is-better metrics (TTFT, latency; `value <= threshold` meets the SLO) pass
when the whole interval is at or under the threshold and fail when the whole interval is
above it; higher-is-better metrics (TPS; `value >= threshold`) mirror that. An interval that
spans the threshold is **undecided**: the level was measured, but not well enough to say.
The point verdict (`point`) compares the estimate alone, exactly as `capacity.judge_level`
does, so C_max keeps DESIGN's definition while the interval verdict says how sure it is.

A level verdict combines its metrics: any fail -> fail, all pass -> pass, else undecided.
A level with failed requests fails whatever its intervals say (a failure is an SLO miss,
goodput), and a metric without successful samples fails. `cmax_bracket` reads C_max off
ordered level verdicts and names the level below it, the first level above it that misses,
and which SLO binds there.

Contract: pure functions over floats and `Interval`s; no I/O, no pydantic models.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from servecap.stats.bootstrap import Interval


class Verdict(StrEnum):
    """One SLO check's outcome."""

    PASS = "pass"
    FAIL = "fail"
    UNDECIDED = "undecided"


def _meets(value: float, threshold: float, higher_is_better: bool) -> bool:
    return value >= threshold if higher_is_better else value <= threshold


def judge_interval(
    low: float, high: float, threshold: float, *, higher_is_better: bool
) -> Verdict:
    """Pass if the whole interval meets the threshold, fail if none of it does."""
    if low > high:
        raise ValueError(f"interval low {low} is above high {high}")
    worst, best = (low, high) if higher_is_better else (high, low)
    if _meets(worst, threshold, higher_is_better):
        return Verdict.PASS
    if not _meets(best, threshold, higher_is_better):
        return Verdict.FAIL
    return Verdict.UNDECIDED


def combine(verdicts: Sequence[Verdict]) -> Verdict:
    """Any fail -> fail; every one passes -> pass; otherwise undecided."""
    if any(v is Verdict.FAIL for v in verdicts):
        return Verdict.FAIL
    if all(v is Verdict.PASS for v in verdicts):
        return Verdict.PASS
    return Verdict.UNDECIDED


@dataclass(frozen=True, slots=True)
class MetricVerdict:
    """One metric's statistic against its SLO threshold."""

    metric: str
    threshold: float
    higher_is_better: bool
    interval: Interval | None
    point: Verdict
    verdict: Verdict


def judge_metric(
    metric: str, interval: Interval | None, threshold: float, *, higher_is_better: bool
) -> MetricVerdict:
    """The point and interval verdicts of one metric; no samples fails both."""
    if interval is None:
        point = verdict = Verdict.FAIL
    else:
        ok = _meets(interval.estimate, threshold, higher_is_better)
        point = Verdict.PASS if ok else Verdict.FAIL
        verdict = judge_interval(
            interval.low, interval.high, threshold, higher_is_better=higher_is_better
        )
    return MetricVerdict(metric, threshold, higher_is_better, interval, point, verdict)


@dataclass(frozen=True, slots=True)
class LevelVerdicts:
    """Every SLO of one level, and whether its requests all succeeded."""

    metrics: tuple[MetricVerdict, ...]
    clean: bool

    @property
    def point_ok(self) -> bool:
        """Meets every SLO on the point estimates (DESIGN's rule for C_max)."""
        return self.clean and all(m.point is Verdict.PASS for m in self.metrics)

    @property
    def verdict(self) -> Verdict:
        """Pass, fail or undecided, counting the intervals."""
        if not self.clean:
            return Verdict.FAIL
        return combine([m.verdict for m in self.metrics])

    @property
    def missed(self) -> tuple[str, ...]:
        """The SLOs this level misses on the point estimates (`errors` for failed requests)."""
        names = tuple(m.metric for m in self.metrics if m.point is not Verdict.PASS)
        return names if self.clean else (*names, "errors")


def judge_slos(
    ttft: Interval | None,
    tps: Interval | None,
    *,
    ttft_slo_ms: float,
    tps_slo: float,
    error_rate: float | None,
) -> LevelVerdicts:
    """A level's TTFT (ms, lower is better) and TPS (higher is better) verdicts."""
    return LevelVerdicts(
        metrics=(
            judge_metric("ttft", ttft, ttft_slo_ms, higher_is_better=False),
            judge_metric("tps", tps, tps_slo, higher_is_better=True),
        ),
        clean=not error_rate,
    )


@dataclass(frozen=True, slots=True)
class CmaxBracket:
    """C_max with the measured levels either side of it and what stops it going higher."""

    c_max: float | None
    below: float | None
    above: float | None
    binding: tuple[str, ...]
    verdict_at_c_max: Verdict | None
    verdict_above: Verdict | None


def cmax_bracket(levels: Sequence[tuple[float, LevelVerdicts]]) -> CmaxBracket:
    """C_max from (level value, verdicts) pairs, by DESIGN: every level up to it passes.

    `below` is the level under C_max, `above` the first level that misses (None when every
    level passes), `binding` the SLOs it misses there.
    """
    ordered = sorted(levels, key=lambda pair: pair[0])
    passed: list[tuple[float, LevelVerdicts]] = []
    for value, verdicts in ordered:
        if not verdicts.point_ok:
            return _bracket(passed, (value, verdicts))
        passed.append((value, verdicts))
    return _bracket(passed, None)


def _bracket(
    passed: list[tuple[float, LevelVerdicts]], failed: tuple[float, LevelVerdicts] | None
) -> CmaxBracket:
    top = passed[-1] if passed else None
    return CmaxBracket(
        c_max=top[0] if top else None,
        below=passed[-2][0] if len(passed) > 1 else None,
        above=failed[0] if failed else None,
        binding=failed[1].missed if failed else (),
        verdict_at_c_max=top[1].verdict if top else None,
        verdict_above=failed[1].verdict if failed else None,
    )
