"""Per-metric findings: who is best at the lowest and highest level, and how each one scales."""

from __future__ import annotations

from servecap.analysis.findings import Finding, Section
from servecap.analysis.series import ConfigSeries
from servecap.core.level_key import LevelKey

# metric -> (section, label, unit, lower is better, digits)
METRICS: dict[str, tuple[Section, str, str, bool, int]] = {
    "ttft": ("ttft", "TTFT", "ms", True, 1),
    "itl": ("itl", "ITL", "ms", True, 2),
    "tps": ("tps", "TPS per user", "tok/s", False, 1),
    "latency": ("latency", "latency", "s", True, 2),
}


def _mean(series: ConfigSeries, metric: str, key: LevelKey) -> float | None:
    level = series.at(key)
    return None if level is None else level.value(metric, "mean")


def metric_findings(series: list[ConfigSeries], levels: list[LevelKey]) -> list[Finding]:
    """Best config at the lowest and highest level, and growth per config, for each metric."""
    findings: list[Finding] = []
    if not levels:
        return findings
    for metric, (section, label, unit, lower, digits) in METRICS.items():
        for c in dict.fromkeys((levels[0], levels[-1])):
            values = {s.name: _mean(s, metric, c) for s in series}
            known = {k: v for k, v in values.items() if v is not None}
            if not known:
                continue
            pick = min if lower else max
            best = pick(known, key=lambda k: known[k])
            listing = ", ".join(f"{k} {v:.{digits}f}" for k, v in known.items())
            findings.append(
                Finding(
                    kind=f"{metric}_best",
                    section=section,
                    configs=[best],
                    level=c,
                    text=f"At {c} the best mean {label} is {best}'s {known[best]:.{digits}f} "
                    f"{unit} ({listing}).",
                    numbers=dict(known),
                )
            )
        findings.extend(_growth(series, metric, label, unit, digits, section, levels))
    return findings


def _growth(
    series: list[ConfigSeries],
    metric: str,
    label: str,
    unit: str,
    digits: int,
    section: Section,
    levels: list[LevelKey],
) -> list[Finding]:
    lo, hi = levels[0], levels[-1]
    parts: list[str] = []
    numbers: dict[str, float | None] = {}
    for s in series:
        a, b = _mean(s, metric, lo), _mean(s, metric, hi)
        if a is None or b is None or a == 0:
            continue
        parts.append(f"{s.name} {a:.{digits}f} -> {b:.{digits}f} {unit} ({b / a:.2f}x)")
        numbers[s.name] = b / a
    if not parts or lo == hi:
        return []
    return [
        Finding(
            kind=f"{metric}_growth",
            section=section,
            text=f"Mean {label} from {lo} to {hi}: " + "; ".join(parts) + ".",
            numbers=numbers,
        )
    ]
