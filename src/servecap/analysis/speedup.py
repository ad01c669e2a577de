"""Speedup of a configuration over its baseline (spec TPS / direct TPS) and the break-even level.

Break-even is interpolated linearly in log2 of the level's value (c for a closed loop) between
the last level where the ratio is >= 1 and the first where it is < 1, because levels double.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from itertools import pairwise

from pydantic import BaseModel

from servecap.analysis.findings import Finding
from servecap.analysis.series import ConfigSeries
from servecap.core.errors import bad_setting
from servecap.core.level_key import LevelKey
from servecap.kinds.registry import kind_of

_SPEC_SUFFIX = re.compile(r"^(?P<stem>.+?)[-_]spec$", re.IGNORECASE)


class Pair(BaseModel):
    """A configuration and the baseline it is compared with."""

    spec: str
    base: str

    @property
    def label(self) -> str:
        return f"{self.spec} / {self.base}"


class SpeedupPoint(BaseModel):
    level: LevelKey
    spec_tps: float
    base_tps: float
    ratio: float


class PairSpeedup(BaseModel):
    pair: Pair
    points: list[SpeedupPoint]
    break_even: float | None
    break_even_between: tuple[LevelKey, LevelKey] | None

    def at(self, key: LevelKey) -> float | None:
        for point in self.points:
            if point.level == key:
                return point.ratio
        return None


def parse_pair(text: str, names: Sequence[str]) -> Pair:
    """`SPEC:BASE` naming two of `names`; anything else is a UserInputError."""
    spec, sep, base = text.partition(":")
    spec, base = spec.strip(), base.strip()
    if not sep or not spec or not base or ":" in base:
        raise bad_setting("pair", f"{text!r}: expected SPEC:BASE, e.g. x-spec:x-direct",
                          "invalid ")
    missing = [n for n in (spec, base) if n not in names]
    if missing:
        known = ", ".join(sorted(names)) or "none"
        raise bad_setting(
            "pair", f"{text!r}: no run named {', '.join(map(repr, missing))} (runs: {known})",
            "invalid ")
    if spec == base:
        raise bad_setting("pair", f"{text!r}: a run cannot be its own baseline", "invalid ")
    return Pair(spec=spec, base=base)


def infer_pairs(names: Sequence[str]) -> list[Pair]:
    """Pairs `X-spec` against `X-direct` (or `X`) among `names`, in name order."""
    pairs: list[Pair] = []
    lowered = {n.lower(): n for n in names}
    for name in names:
        match = _SPEC_SUFFIX.match(name)
        if not match:
            continue
        stem = match.group("stem").lower()
        for candidate in (f"{stem}-direct", f"{stem}_direct", stem):
            if candidate in lowered and lowered[candidate] != name:
                pairs.append(Pair(spec=name, base=lowered[candidate]))
                break
    return pairs


def pair_speedup(pair: Pair, spec: ConfigSeries, base: ConfigSeries) -> PairSpeedup:
    """Mean-TPS ratio per shared level, and where it crosses 1."""
    points: list[SpeedupPoint] = []
    for level in spec.levels:
        other = base.at(level.key)
        if other is None or level.tps_mean is None or not other.tps_mean:
            continue
        points.append(
            SpeedupPoint(
                level=level.key,
                spec_tps=level.tps_mean,
                base_tps=other.tps_mean,
                ratio=level.tps_mean / other.tps_mean,
            )
        )
    between, crossing = _break_even(points)
    return PairSpeedup(pair=pair, points=points, break_even=crossing, break_even_between=between)


def _break_even(
    points: list[SpeedupPoint],
) -> tuple[tuple[LevelKey, LevelKey] | None, float | None]:
    for prev, cur in pairwise(points):
        if prev.ratio >= 1.0 > cur.ratio and kind_of(prev.level) is kind_of(cur.level):
            x0, x1 = math.log2(prev.level.value), math.log2(cur.level.value)
            frac = (prev.ratio - 1.0) / (prev.ratio - cur.ratio)
            return (prev.level, cur.level), 2 ** (x0 + frac * (x1 - x0))
    return None, None


def speedup_findings(result: PairSpeedup) -> list[Finding]:
    """The gain at the lowest level, the loss at the highest, and the break-even."""
    if not result.points:
        return []
    first, last = result.points[0], result.points[-1]
    label = result.pair.label
    ratios = " ".join(f"{p.ratio:.2f}" for p in result.points)
    text = (
        f"{label}: TPS ratio {first.ratio:.2f}x at {first.level} "
        f"({first.spec_tps:.1f} vs {first.base_tps:.1f} tok/s) and {last.ratio:.2f}x at "
        f"{last.level} ({last.spec_tps:.1f} vs {last.base_tps:.1f} tok/s); "
        f"per level: {ratios}."
    )
    findings = [
        Finding(
            kind="speedup",
            section="speedup",
            configs=[result.pair.spec, result.pair.base],
            text=text,
            numbers={"first_ratio": first.ratio, "last_ratio": last.ratio},
        )
    ]
    findings.append(_break_even_finding(result))
    return findings


def _break_even_finding(result: PairSpeedup) -> Finding:
    label = result.pair.label
    configs = [result.pair.spec, result.pair.base]
    if result.break_even is None or result.break_even_between is None:
        above = all(p.ratio >= 1.0 for p in result.points)
        where = "faster at every level" if above else "not faster at the lowest level"
        return Finding(
            kind="break_even",
            section="speedup",
            configs=configs,
            text=f"{label}: no break-even within the measured levels ({result.pair.spec} is "
            f"{where}).",
        )
    lo, hi = result.break_even_between
    before, after = result.at(lo), result.at(hi)
    near = f"{lo.prefix}={result.break_even:.1f}{lo.unit}"
    return Finding(
        kind="break_even",
        section="speedup",
        configs=configs,
        text=(
            f"{label}: break-even near {near} (ratio {before:.2f}x at "
            f"{lo}, {after:.2f}x at {hi}, interpolated in log2 {lo.prefix}); above it "
            f"{result.pair.spec} gives each user fewer tokens/s than {result.pair.base}."
        ),
        numbers={"break_even": result.break_even, "ratio_before": before, "ratio_after": after},
    )


def break_even_level(levels: Sequence[LevelKey], ratios: Sequence[float]) -> float | None:
    """Where a ratio per level falls through 1 (interpolated as `pair_speedup` does)."""
    points = [
        SpeedupPoint(level=key, spec_tps=ratio, base_tps=1.0, ratio=ratio)
        for key, ratio in zip(levels, ratios, strict=True)
    ]
    return _break_even(points)[1]
