"""Consistency of each level: is mean latency close to TTFT + (N - 1) x ITL?

A stream's time is its wait for the first token plus N - 1 token gaps, so the means must
roughly add up. A row that adds up is real behaviour, however odd it looks; one that does
not points at a measurement problem (or at a different N than assumed).
"""

from __future__ import annotations

from pydantic import BaseModel

from servecap.analysis.findings import Finding
from servecap.analysis.series import ConfigSeries, tokens_per_request
from servecap.core.level_key import LevelKey

TOLERANCE = 0.10


class ConsistencyRow(BaseModel):
    config: str
    level: LevelKey
    ttft_ms: float
    itl_ms: float
    tokens: float
    tokens_source: str
    predicted_s: float
    latency_s: float
    deviation: float

    @property
    def ok(self) -> bool:
        return abs(self.deviation) <= TOLERANCE


def consistency_rows(series: ConfigSeries) -> list[ConsistencyRow]:
    rows: list[ConsistencyRow] = []
    for level in series.levels:
        tokens, source = tokens_per_request(series, level)
        ttft, itl, lat = level.ttft_mean_ms, level.itl_mean_ms, level.latency_mean_s
        if tokens is None or ttft is None or itl is None or not lat:
            continue
        predicted = ttft / 1000 + (tokens - 1) * itl / 1000
        rows.append(
            ConsistencyRow(
                config=series.name,
                level=level.key,
                ttft_ms=ttft,
                itl_ms=itl,
                tokens=tokens,
                tokens_source=source,
                predicted_s=predicted,
                latency_s=lat,
                deviation=predicted / lat - 1.0,
            )
        )
    return rows


def consistency_findings(rows: list[ConsistencyRow], jumps: list[Finding]) -> list[Finding]:
    """One finding per inconsistent row, and an explanation for each TTFT-jump row."""
    findings: list[Finding] = []
    by_key = {(r.config, r.level): r for r in rows}
    for row in rows:
        if not row.ok:
            findings.append(
                Finding(
                    kind="inconsistent",
                    section="consistency",
                    configs=[row.config],
                    level=row.level,
                    severity="warning",
                    text=(
                        f"{row.config} {row.level}: TTFT {row.ttft_ms:.1f} ms + "
                        f"({row.tokens:.0f} - 1) x ITL {row.itl_ms:.2f} ms = "
                        f"{row.predicted_s:.2f} s, "
                        f"but mean latency is {row.latency_s:.2f} s ({row.deviation:+.0%}): "
                        "the row does not add up."
                    ),
                    numbers={"predicted_s": row.predicted_s, "latency_s": row.latency_s},
                )
            )
    if rows:
        good = sum(r.ok for r in rows)
        worst = max(rows, key=lambda r: abs(r.deviation))
        findings.insert(
            0,
            Finding(
                kind="consistency_summary",
                section="consistency",
                text=(
                    f"{good} of {len(rows)} levels have a mean latency within {TOLERANCE:.0%} "
                    f"of TTFT + (N - 1) x ITL; the largest gap is {worst.config} "
                    f"{worst.level} "
                    f"({worst.deviation:+.1%})."
                ),
                numbers={"consistent": good, "levels": len(rows), "worst": worst.deviation},
            ),
        )
    for jump in jumps:
        found = by_key.get((jump.configs[0], jump.level)) if jump.level else None
        if found is not None and found.ok:
            findings.append(_explained_jump(found))
    return findings


def _explained_jump(row: ConsistencyRow) -> Finding:
    decode_s = (row.tokens - 1) * row.itl_ms / 1000
    return Finding(
        kind="consistent_jump",
        section="consistency",
        configs=[row.config],
        level=row.level,
        text=(
            f"{row.config} {row.level} is consistent, not a measurement anomaly: "
            f"TTFT {row.ttft_ms / 1000:.2f} s + ({row.tokens:.0f} - 1) x {row.itl_ms:.2f} ms "
            f"= {row.predicted_s:.2f} s against a mean latency of {row.latency_s:.2f} s "
            f"({row.deviation:+.1%}; N {row.tokens_source}). Time moved from decoding "
            f"({decode_s:.2f} s) into waiting for the first token: requests queue for "
            "admission, and the ones admitted decode with a shorter ITL."
        ),
        numbers={
            "ttft_s": row.ttft_ms / 1000,
            "decode_s": decode_s,
            "predicted_s": row.predicted_s,
            "latency_s": row.latency_s,
        },
    )
