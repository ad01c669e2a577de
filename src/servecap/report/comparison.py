"""The comparison a report leads with: per pair, the capacity delta with its intervals.

Built by `api.comparison.report` from a stored comparison (or from separate runs of one
workload, then marked not interleaved) and put on the report's model, so `report.html`,
`report.md` and the comparison charts (`report.charts_compare`) show the same numbers:
each pair's headline sentences (users difference with its interval first), both targets'
C_max and users with their intervals and, next to them, the small-sample warnings of the
levels that decide them; the speed-up per level and the break-even level with intervals;
and each target's SLO statistic per level with its interval, for the error-bar charts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, Field

from servecap.analysis.capacity_delta import Capacity, Headline
from servecap.analysis.comparison import PairComparison
from servecap.analysis.cost_delta import CostDelta, cost_delta
from servecap.core.config import SLO
from servecap.core.cost import CostBasis
from servecap.core.summary import LevelSummary
from servecap.kinds.registry import kind_of
from servecap.stats.difference import Bounds, Difference


class Interval(BaseModel):
    """A point estimate with its interval; None where there is none (e.g. no C_max)."""

    estimate: float | None = None
    low: float | None = None
    high: float | None = None


class TargetCapacity(BaseModel):
    name: str
    c_max: Interval
    users: Interval
    warnings: list[str] = Field(default_factory=list)  # levels deciding C_max, too few samples


class LevelPoint(BaseModel):
    level: float
    label: str
    value: Interval


class Sentence(BaseModel):
    """One headline sentence, with the small-sample warnings of the numbers it states."""

    text: str
    warnings: list[str] = Field(default_factory=list)

    def note(self) -> str:
        """The warnings as one parenthesis to follow the text ("" without any)."""
        return f" (small sample: {'; '.join(self.warnings)})" if self.warnings else ""


# (metric, statistic, column title, unit, digits): the verdicts each pair shows per level
VERDICT_COLUMNS: tuple[tuple[str, str, str, str, int], ...] = (
    ("ttft_ms", "", "TTFT", "ms", 1), ("tps", "", "TPS", "tok/s", 1),
    ("latency_s", "mean", "latency mean", "s", 2),
)


class VerdictRow(BaseModel):
    """One level of a pair: per metric who is better (or no significant difference)."""

    level: str
    cells: list[str]


class PairCost(BaseModel):
    """Which target is cheaper per served user (`analysis.cost_delta`)."""

    currency: str
    per_user_hour: list[Interval]  # A, then B
    difference: Interval  # B - A
    cheaper: str  # a target's name, or "undecided"


def _pair_cost(delta: CostDelta | None) -> PairCost | None:
    if delta is None:
        return None
    who = {"a": delta.a, "b": delta.b}.get(delta.cheaper, "undecided")
    return PairCost(currency=delta.currency,
                    per_user_hour=[_span(c.estimate, c.low, c.high)
                                   for c in (delta.a_cost, delta.b_cost)],
                    difference=_span(delta.difference.estimate, delta.difference.low,
                                     delta.difference.high),
                    cheaper=who)


def _confidence(pair: PairComparison) -> float:
    return next((d.confidence for lv in pair.levels for d in lv.diffs.values()), 0.95)


class PairSection(BaseModel):
    a: str
    b: str
    interleaved: bool
    sentences: list[str]
    lines: list[Sentence] = Field(default_factory=list)  # the sentences, warnings beside
    verdict_header: list[str] = Field(default_factory=list)
    verdicts: list[VerdictRow] = Field(default_factory=list)
    capacity: list[TargetCapacity]  # A, then B
    users_difference: Interval | None = None
    speedups: list[LevelPoint] = Field(default_factory=list)
    break_even: Interval | None = None
    # cost per served user-hour (A, then B) and B - A, where both have GPUs and a price
    cost: PairCost | None = None


class ComparisonSection(BaseModel):
    """What the report's comparison part shows (see the module's text)."""

    interleaved: bool
    statistic: str
    slo: SLO
    method: str
    pairs: list[PairSection]
    # target -> metric ("ttft_ms", "tps") -> the SLO statistic per level, with its interval
    series: dict[str, dict[str, list[LevelPoint]]] = Field(default_factory=dict)
    repeats: int | None = None
    schedule: str = "interleaved"  # or "lockstep" (`comparison.json`'s schedule)

    def setting(self) -> str:
        """How the targets were run, in one sentence (what drift the intervals control)."""
        if not self.interleaved:
            return ("Separate runs of the same workload, not interleaved: drift between them "
                    "is not controlled, so the intervals cover request noise only.")
        n = self.repeats
        repeats = f", {n} repeat{'' if n == 1 else 's'} per level" if n else ""
        if self.schedule == "lockstep":
            return (f"Lock-step comparison{repeats}: every level ran on all targets at the "
                    "same moments, each target with its own client process and the same "
                    "prompts in the same order, so drift on the machine hit them alike.")
        return (f"Interleaved comparison{repeats}: the targets ran the same workload in a "
                "balanced order, so drift on the machine hit them alike.")


def _interval(b: Bounds | None) -> Interval | None:
    return None if b is None else Interval(estimate=b.estimate, low=b.low, high=b.high)


def _span(point: float | None, low: float | None, high: float | None) -> Interval:
    return Interval(estimate=point, low=low, high=high)


def _deciding_warnings(
    cap: Capacity, levels: Sequence[LevelSummary], stat: str
) -> list[str]:
    """Small-sample warnings on the SLO statistic (a P90 from too few requests) of the levels
    C_max's interval rests on: up to its high end and the first level above it, among the
    levels of the sweep's (lowest) kind."""
    top = cap.c_max_high if cap.c_max_high is not None else cap.c_max
    ordered = sorted(levels, key=lambda lv: lv.key)
    kind = kind_of(ordered[0].key) if ordered else None
    label = f"{stat.upper()} "
    out: list[str] = []
    for level in (lv for lv in ordered if kind is not None and kind.owns(lv.key)):
        out += [f"{level.key}: {w}" for w in level.warnings if w.startswith(label)]
        if top is None or level.key.value > top:
            break
    return out


def _capacity(cap: Capacity, levels: Sequence[LevelSummary], stat: str) -> TargetCapacity:
    return TargetCapacity(
        name=cap.name,
        c_max=_span(cap.c_max, cap.c_max_low, cap.c_max_high),
        users=_span(cap.users, cap.users_low, cap.users_high),
        warnings=_deciding_warnings(cap, levels, stat),
    )


def _pair_section(
    pair: PairComparison, head: Headline, levels_of: Mapping[str, Sequence[LevelSummary]],
    stat: str, costs: Mapping[str, CostBasis | None],
) -> PairSection:
    speedups = [
        LevelPoint(level=float(s.level.value), label=str(s.level),
                   value=Interval(estimate=s.ratio.estimate, low=s.ratio.low, high=s.ratio.high))
        for s in head.speedups
    ]
    even = None
    if head.break_even is not None:
        even = _span(head.break_even, head.break_even_low, head.break_even_high)
    capacity = [_capacity(c, levels_of.get(c.name, []), stat) for c in (head.a, head.b)]
    header, verdicts = _verdicts(pair, stat)
    delta = cost_delta(head.a, head.b, costs.get(head.a.name), costs.get(head.b.name))
    sentences = list(head.sentences)
    if delta is not None:  # after the users sentence it prices
        sentences.insert(1, delta.sentence(_confidence(pair)))
    return PairSection(
        a=head.a.name, b=head.b.name, interleaved=head.interleaved,
        sentences=sentences, lines=_lines(sentences, capacity),
        capacity=capacity,
        users_difference=_interval(head.users_difference), speedups=speedups,
        break_even=even, verdict_header=header, verdicts=verdicts, cost=_pair_cost(delta),
    )


def _verdict_cell(diff: Difference | None, pair: PairComparison, unit: str, digits: int) -> str:
    """`b better: B - A -35.2 ms (CI -40.1..-30.3)`, or `no significant difference: ...`."""
    if diff is None:
        return "n/a"
    d = diff.difference
    span = f"{d.estimate:+.{digits}f} {unit} (CI {d.low:+.{digits}f}..{d.high:+.{digits}f})"
    who = {"a": f"{pair.a} better", "b": f"{pair.b} better"}.get(diff.better.value)
    return f"{who if who else 'no significant difference'}: B - A {span}"


def _verdicts(pair: PairComparison, stat: str) -> tuple[list[str], list[VerdictRow]]:
    label = "P90" if stat == "p90" else "mean"
    header = ["level"] + [f"{title} {label}" if not own else title
                          for _, own, title, _, _ in VERDICT_COLUMNS]
    rows = [
        VerdictRow(level=str(lv.level), cells=[
            _verdict_cell(lv.diffs.get((metric, own or stat)), pair, unit, digits)
            for metric, own, _, unit, digits in VERDICT_COLUMNS
        ])
        for lv in pair.levels
    ]
    return header, rows


def _lines(sentences: Sequence[str], capacity: Sequence[TargetCapacity]) -> list[Sentence]:
    """A target's capacity sentence (`NAME: C_max ...`) carries that target's warnings."""
    out = []
    for text in sentences:
        cap = next((c for c in capacity if text.startswith(f"{c.name}: C_max")), None)
        out.append(Sentence(text=text, warnings=cap.warnings if cap else []))
    return out


def _series(pairs: Sequence[PairComparison], stat: str) -> dict[str, dict[str, list[LevelPoint]]]:
    """Each target's statistic per level with its interval, from the first pair it is in."""
    out: dict[str, dict[str, list[LevelPoint]]] = {}
    for pair in pairs:
        for side, name in (("a", pair.a), ("b", pair.b)):
            if name in out:
                continue
            per_metric: dict[str, list[LevelPoint]] = {"ttft_ms": [], "tps": []}
            for level in pair.levels:
                for metric, points in per_metric.items():
                    diff = level.diffs.get((metric, stat))
                    if diff is None:
                        continue
                    bounds = diff.a if side == "a" else diff.b
                    points.append(LevelPoint(
                        level=float(level.level.value), label=str(level.level),
                        value=Interval(estimate=bounds.estimate, low=bounds.low,
                                       high=bounds.high),
                    ))
            out[name] = per_metric
    return out


def comparison_section(
    pairs: Sequence[PairComparison], heads: Sequence[Headline], slo: SLO, method: str,
    levels_of: Mapping[str, Sequence[LevelSummary]], repeats: int | None = None,
    schedule: str = "interleaved", costs: Mapping[str, CostBasis | None] | None = None,
) -> ComparisonSection:
    """The section from the pairs and their headlines (in the same order); `costs`: each
    target's GPUs and price, for which one is cheaper per served user."""
    return ComparisonSection(
        interleaved=all(p.interleaved for p in pairs), statistic=slo.statistic, slo=slo,
        method=method,
        pairs=[_pair_section(p, h, levels_of, slo.statistic, costs or {})
               for p, h in zip(pairs, heads, strict=True)],
        series=_series(pairs, slo.statistic), repeats=repeats, schedule=schedule,
    )
