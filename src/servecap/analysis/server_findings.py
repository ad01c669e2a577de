"""Diagnosis: why capacity ends where it does, from the server's own view of each level.

Each rule is a pure function of one configuration's level summaries (their `server_*`
fields, next to the client's) and cites both sides. A level without server fields (scraping
off, an engine without the series) never fires a rule.
"""

from __future__ import annotations

from servecap.analysis.findings import Finding, Severity
from servecap.analysis.series import ConfigSeries, fmt, ratio
from servecap.core.summary import LevelSummary

QUEUE_SHARE = 0.5  # requests waited during at least half of the level's scrapes ...
QUEUE_MEAN = 1.0  # ... with at least one waiting on average
KV_FULL = 0.9  # KV usage at or above this: admission is memory-bound
ACCEPTANCE_FALL = 0.75  # acceptance below this share of its low-load value: it fell
RATE_DISAGREEMENT = 0.05  # server and client token rates further apart than this
RATE_MIN_WALL_S = 5.0  # a level this long, so scrape edges do not move the rate


def _ttft(level: LevelSummary) -> tuple[str, float | None]:
    if level.ttft_p90_ms is not None:
        return "TTFT p90", level.ttft_p90_ms
    return "TTFT mean", level.ttft_mean_ms


def _bound(level: LevelSummary) -> str:
    kv = level.server_kv_usage_mean
    if kv is not None and kv >= KV_FULL:
        return f" while KV usage sat at {kv:.0%}: memory-bound admission"
    if level.server_running_max is not None:
        # the engine's batch limit is not in its metrics: say what ran, not why
        return f" while at most {fmt(level.server_running_max, 0)} ran at once"
    return ""


def _queued(level: LevelSummary) -> bool:
    share, mean = level.server_waiting_share, level.server_waiting_mean
    return share is not None and mean is not None and share >= QUEUE_SHARE and mean >= QUEUE_MEAN


def queue_findings(series: ConfigSeries) -> list[Finding]:
    """The level with a standing queue in the server where TTFT jumps the most (from the
    level before); the first queued level when no TTFT can be compared."""
    best: tuple[float, LevelSummary, LevelSummary | None] | None = None
    prev: LevelSummary | None = None
    for level in series.levels:
        if _queued(level):
            jump = ratio(_ttft(level)[1], _ttft(prev)[1]) if prev is not None else None
            if best is None or (jump or 0.0) > best[0]:
                best = (jump or 0.0, level, prev)
        prev = level
    if best is None:
        return []
    _, level, before = best
    label, ttft = _ttft(level)
    jump = ratio(ttft, _ttft(before)[1]) if before is not None else None
    since = f" ({jump:.1f}x {before.key})" if jump is not None and before is not None else ""
    share, mean = level.server_waiting_share or 0.0, level.server_waiting_mean
    text = (
        f"{series.name} {level.key}: {label} {fmt(ttft, 0)} ms{since}; requests waited in "
        f"the server's queue for {share:.0%} of the level (mean {fmt(mean, 1)} waiting, "
        f"max {fmt(level.server_waiting_max, 0)}){_bound(level)}."
    )
    return [Finding(
        kind="server_queue", section="server", configs=[series.name], level=level.key,
        severity="warning", text=text,
        numbers={"ttft_ms": ttft, "ttft_jump": jump, "waiting_share": share,
                 "waiting_mean": mean, "waiting_max": level.server_waiting_max,
                 "kv_usage_mean": level.server_kv_usage_mean},
    )]


def acceptance_findings(series: ConfigSeries) -> list[Finding]:
    """Speculative acceptance per level, and the level where it fell (if it did)."""
    levels = [lv for lv in series.levels if lv.server_spec_acceptance is not None]
    if len(levels) < 2:
        return []
    first, last = levels[0], levels[-1]
    a0, a1 = first.server_spec_acceptance, last.server_spec_acceptance
    assert a0 is not None and a1 is not None
    per_level = ", ".join(f"{lv.key} {lv.server_spec_acceptance:.2f}" for lv in levels)
    fell = next(
        (lv for lv in levels if (lv.server_spec_acceptance or 0.0) < ACCEPTANCE_FALL * a0), None
    )
    severity: Severity
    if fell is None:
        text = f"{series.name}: speculative acceptance held steady across levels ({per_level})."
        kind, severity = "spec_acceptance", "info"
    else:
        text = (
            f"{series.name}: speculative acceptance fell from {a0:.2f} at {first.key} to "
            f"{a1:.2f} at {last.key} ({per_level}): speculation pays off less from {fell.key}."
        )
        kind, severity = "spec_acceptance_falls", "warning"
    return [Finding(
        kind=kind, section="server", configs=[series.name],
        level=fell.key if fell is not None else None, severity=severity, text=text,
        numbers={"acceptance_first": a0, "acceptance_last": a1},
    )]


def rate_findings(series: ConfigSeries) -> list[Finding]:
    """Levels where the server's generated tokens/s and the client's disagree."""
    out: list[Finding] = []
    for level in series.levels:
        server, client = level.server_generation_tok_s, level.output_tok_s
        gap = ratio(server, client)
        if gap is None or (level.wall_s or 0.0) < RATE_MIN_WALL_S:
            continue
        if abs(gap - 1.0) <= RATE_DISAGREEMENT:
            continue
        out.append(Finding(
            kind="server_rate_mismatch", section="server", configs=[series.name],
            level=level.key, severity="notice",
            text=(
                f"{series.name} {level.key}: the server counted {fmt(server)} generated tok/s, "
                f"the client {fmt(client)} ({gap - 1.0:+.0%}): one of them miscounts tokens "
                "(usage, reasoning or special tokens)."
            ),
            numbers={"server_tok_s": server, "client_tok_s": client, "ratio": gap},
        ))
    return out


def spec_pays_findings(spec: ConfigSeries, base: ConfigSeries) -> list[Finding]:
    """The first level where the speculative config decodes no faster than its baseline
    (ITL mean), with the acceptance the server reported there and at the lowest level."""
    levels = [lv for lv in spec.levels if lv.server_spec_acceptance is not None]
    if not levels:
        return []
    low = levels[0].server_spec_acceptance
    for level in levels:
        other = base.at(level.key)
        ours, theirs = level.itl_mean_ms, other.itl_mean_ms if other is not None else None
        if ours is None or theirs is None or ours < theirs:
            continue
        acceptance = level.server_spec_acceptance
        return [Finding(
            kind="spec_stops_paying", section="server", configs=[spec.name, base.name],
            level=level.key, severity="notice",
            text=(
                f"{spec.name}: speculation stops paying off at {level.key}: ITL mean "
                f"{fmt(ours)} ms against {fmt(theirs)} ms for {base.name}, with acceptance "
                f"{fmt(acceptance)} there ({fmt(low)} at {levels[0].key})."
            ),
            numbers={"itl_ms": ours, "base_itl_ms": theirs, "acceptance": acceptance,
                     "acceptance_low": low},
        )]
    return []


def server_findings(series: ConfigSeries) -> list[Finding]:
    """Every diagnosis rule over one configuration."""
    return [*queue_findings(series), *acceptance_findings(series), *rate_findings(series)]
