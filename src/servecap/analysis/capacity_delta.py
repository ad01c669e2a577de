"""A comparison's headline: the capacity delta under the SLOs, with its intervals.

Per target, from the per-level intervals of `analysis.comparison` (the SLO statistic of TTFT
and TPS, the mean latency):

- C_max (DESIGN's definition, on the point estimates) and its interval on the measured
  levels: the low end is the highest level up to which every level *passes* on its
  intervals (`stats.verdict.judge_interval`), the high end the highest level up to which no
  level *fails* (undecided levels count as possibly passing).
- Users by Little's law, N = C (1 + Z / L_mean): the point at C_max, the low end at C_max's
  low end with L_mean's upper bound, the high end at C_max's high end with L_mean's lower
  bound.
- The users difference B - A, its interval by interval arithmetic on the two targets'
  intervals ([B.low - A.high, B.high - A.low]): conservative (at least the stated
  confidence when the two intervals are independent), and honest when C_max is coarse.
- The speed-up per level (mean TPS of B / A, with its bootstrap interval) and the break-even
  level where it crosses 1 (log2-interpolated as `analysis.speedup`), its interval where the
  ratio's lower and upper bounds cross 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from servecap.analysis.comparison import LevelComparison, PairComparison
from servecap.analysis.speedup import break_even_level
from servecap.core.config import SLO
from servecap.core.level_key import LevelKey, format_value
from servecap.kinds.registry import kind_of
from servecap.stats.difference import CV_WARN, Bounds, Difference, interval_difference
from servecap.stats.verdict import Verdict, combine, judge_interval


@dataclass(frozen=True, slots=True)
class Capacity:
    """One target's C_max and users, each with a low and high end (None: none within SLO)."""

    name: str
    c_max: float | None
    c_max_low: float | None
    c_max_high: float | None
    users: int | None
    users_low: int | None
    users_high: int | None


@dataclass(frozen=True, slots=True)
class SpeedupAt:
    level: LevelKey
    ratio: Bounds


@dataclass
class Headline:
    a: Capacity
    b: Capacity
    users_difference: Bounds | None
    speedups: list[SpeedupAt]
    break_even: float | None
    break_even_low: float | None
    break_even_high: float | None
    interleaved: bool
    sentences: list[str] = field(default_factory=list)


def _side(diff: Difference, side: str) -> Bounds:
    return diff.a if side == "a" else diff.b


def _level_state(level: LevelComparison, side: str, slo: SLO) -> tuple[bool, Verdict] | None:
    """(passes on the point estimates, verdict on the intervals) of one target at a level."""
    ttft = level.diffs.get(("ttft_ms", slo.statistic))
    tps = level.diffs.get(("tps", slo.statistic))
    if ttft is None or tps is None:
        return None
    t, s = _side(ttft, side), _side(tps, side)
    clean = level.clean_a if side == "a" else level.clean_b
    point = clean and t.estimate <= slo.ttft_ms and s.estimate >= slo.tps
    verdicts = [
        judge_interval(t.low, t.high, slo.ttft_ms, higher_is_better=False),
        judge_interval(s.low, s.high, slo.tps, higher_is_better=True),
    ]
    return point, (combine(verdicts) if clean else Verdict.FAIL)


def _top(levels: list[LevelComparison], ok: list[bool]) -> LevelComparison | None:
    best = None
    for level, good in zip(levels, ok, strict=True):
        if not good:
            break
        best = level
    return best


def _users(level: LevelComparison | None, side: str, pick: str, think_s: float) -> int | None:
    if level is None:
        return None
    latency = level.diffs.get(("latency_s", "mean"))
    if latency is None:
        return None
    bounds = _side(latency, side)
    response = {"point": bounds.estimate, "low": bounds.high, "high": bounds.low}[pick]
    return kind_of(level.level).users_at(level.level, response, think_s)


def capacity(pair: PairComparison, side: str, slo: SLO) -> Capacity:
    """C_max and users of one side (`a` or `b`) of a pair, with their intervals."""
    states = [_level_state(lv, side, slo) for lv in pair.levels]
    levels = [lv for lv, st in zip(pair.levels, states, strict=True) if st is not None]
    known = [st for st in states if st is not None]
    point = _top(levels, [st[0] for st in known])
    low = _top(levels, [st[1] is Verdict.PASS for st in known])
    high = _top(levels, [st[1] is not Verdict.FAIL for st in known])
    # a point estimate can fall just outside its percentile interval: the ends bracket it
    if point is not None and (high is None or high.level < point.level):
        high = point
    if point is not None and low is not None and low.level > point.level:
        low = point
    value = lambda lv: None if lv is None else lv.level.value  # noqa: E731
    think = slo.think_time_s
    return Capacity(
        name=pair.a if side == "a" else pair.b,
        c_max=value(point), c_max_low=value(low), c_max_high=value(high),
        users=_users(point, side, "point", think),
        users_low=_users(low, side, "low", think) or 0,
        users_high=_users(high, side, "high", think),
    )


def headline(pair: PairComparison, slo: SLO) -> Headline:
    """B against A: capacities, users difference, speed-ups and break-even, in words too."""
    a, b = capacity(pair, "a", slo), capacity(pair, "b", slo)
    users_diff = None
    if None not in (a.users, b.users, a.users_high, b.users_high):
        assert a.users is not None and b.users is not None
        assert a.users_high is not None and b.users_high is not None
        users_diff = interval_difference(
            Bounds(a.users, a.users_low or 0, a.users_high),
            Bounds(b.users, b.users_low or 0, b.users_high),
        )
    speedups = [
        SpeedupAt(lv.level, d.ratio)
        for lv in pair.levels
        if (d := lv.diffs.get(("tps", "mean"))) is not None and d.ratio is not None
    ]
    keys = [s.level for s in speedups]
    crossings = [
        _crossing(keys, [getattr(s.ratio, part) for s in speedups])
        for part in ("estimate", "low", "high")
    ]
    ends = sorted(c for c in crossings[1:] if c is not None)
    out = Headline(
        a, b, users_diff, speedups, crossings[0],
        ends[0] if len(ends) == 2 else None, ends[-1] if len(ends) == 2 else None,
        pair.interleaved,
    )
    out.sentences = sentences(out, pair, slo)
    return out


def _crossing(keys: list[LevelKey], ratios: list[float]) -> float | None:
    """Where the ratio crosses 1, falling or rising."""
    if not keys or any(r <= 0 for r in ratios):
        return None
    return break_even_level(keys, ratios) or break_even_level(keys, [1 / r for r in ratios])


def _range(low: float | None, high: float | None, fmt: str = "{:g}") -> str:
    show = lambda v: "none" if v is None else fmt.format(v)  # noqa: E731
    return f"{show(low)}..{show(high)}"


def sentences(h: Headline, pair: PairComparison, slo: SLO) -> list[str]:
    """The headline in words a decision maker reads in ten seconds."""
    stat = slo.statistic.upper() if slo.statistic != "mean" else "mean"
    under = f"{stat} TTFT <= {slo.ttft_ms:g} ms and TPS >= {slo.tps:g}"
    conf = f"{round(100 * _confidence(pair))}% CI"
    lines = [_users_sentence(h, under, conf)]
    for cap in (h.a, h.b):
        lines.append(
            f"{cap.name}: C_max {_num(cap.c_max)} ({_range(cap.c_max_low, cap.c_max_high)}), "
            f"users {_num(cap.users)} ({_range(cap.users_low, cap.users_high)})."
        )
    if h.speedups:
        first, last = h.speedups[0], h.speedups[-1]
        for sp in dict.fromkeys([first, last]):
            lines.append(
                f"at {sp.level} {pair.b} gives each user {sp.ratio.estimate:.2f}x the TPS of "
                f"{pair.a} ({conf} {sp.ratio.low:.2f}..{sp.ratio.high:.2f})."
            )
    if h.break_even is not None:
        prefix = h.speedups[0].level.prefix
        lines.append(
            f"break-even near {prefix}={h.break_even:.1f} "
            f"({_range(h.break_even_low, h.break_even_high, '{:.1f}')})."
        )
    lines.extend(_spread_warnings(pair))
    if not h.interleaved:
        lines.append(
            "these runs were not interleaved: drift between them (a busy node, thermal "
            "state) is not controlled, so the intervals cover request noise only."
        )
    return lines


def _users_sentence(h: Headline, under: str, conf: str) -> str:
    d = h.users_difference
    if d is None:
        return f"users under {under}: not comparable (a target meets no level, or no users)."
    if d.low <= 0 <= d.high:
        return (
            f"no significant difference in users at {under}: {h.b.name} minus {h.a.name} "
            f"{d.estimate:+g} ({conf} {d.low:+g}..{d.high:+g})."
        )
    more, less = (h.b.name, h.a.name) if d.estimate > 0 else (h.a.name, h.b.name)
    sign = 1 if d.estimate > 0 else -1
    low, high = sorted((sign * d.low, sign * d.high))
    return (
        f"{more} holds {sign * d.estimate:+g} users ({conf} {low:+g}..{high:+g}) more than "
        f"{less} at {under}."
    )


def _spread_warnings(pair: PairComparison) -> list[str]:
    noisy = [
        str(lv.level) for lv in pair.levels
        if (d := lv.diffs.get(("tps", "mean"))) is not None and d.cv_warning
    ]
    if not noisy:
        return []
    return [
        f"warning: run-to-run spread (CV of mean TPS over repeats) above {CV_WARN:.0%} at "
        f"{', '.join(noisy)}: the node was not steady."
    ]


def _confidence(pair: PairComparison) -> float:
    for lv in pair.levels:
        for d in lv.diffs.values():
            return d.confidence
    return 0.95


def _num(value: float | int | None) -> str:
    return "none" if value is None else format_value(value)
