"""The input of every analysis: one configuration's levels, plus what is known about them."""

from __future__ import annotations

from dataclasses import dataclass, field

from servecap.core.level_key import LevelKey
from servecap.core.numbers import fmt_number
from servecap.core.summary import LevelSummary


@dataclass(frozen=True)
class ConfigSeries:
    """One configuration (run) as the analysis sees it: a name and its level summaries.

    `imported` marks summary-only runs taken from published tables, whose `rps` and
    `tps_p90` follow the publishing tool's definitions, not servecap's.
    `output_tokens` is the mean output length per request when the run recorded it (or asked
    for it); None lets the analysis estimate it from TPS x latency.
    """

    name: str
    levels: list[LevelSummary]
    imported: bool = False
    output_tokens: float | None = None
    output_tokens_source: str = ""
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        ordered = sorted(self.levels, key=lambda lv: lv.key)
        object.__setattr__(self, "levels", ordered)

    def at(self, key: LevelKey) -> LevelSummary | None:
        """The level summary at `key`, if the run has one."""
        for level in self.levels:
            if level.key == key:
                return level
        return None

    @property
    def keys(self) -> list[LevelKey]:
        return [level.key for level in self.levels]


def tokens_per_request(series: ConfigSeries, level: LevelSummary) -> tuple[float | None, str]:
    """Output tokens per request at `level` and where that number comes from."""
    if level.completion_tokens_mean:
        return level.completion_tokens_mean, "measured completion tokens"
    if series.output_tokens:
        return series.output_tokens, series.output_tokens_source or "run config"
    estimates = [
        lv.tps_mean * lv.latency_mean_s
        for lv in series.levels
        if lv.tps_mean is not None and lv.latency_mean_s is not None
    ]
    if not estimates:
        return None, "unknown"
    # mean(N/L) x mean(L) >= N (Jensen), so the smallest product is the tightest estimate
    return float(round(min(estimates))), "estimated: min over levels of TPS mean x mean latency"


fmt = fmt_number  # a number for a finding's text


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None when either is missing or b is zero."""
    if a is None or b is None or b == 0:
        return None
    return a / b
