"""Signs of collapse between adjacent levels: TTFT jumps, and throughput flat while latency rises.

(Aggregate output that falls as load grows lives in `aggregate`.)
"""

from __future__ import annotations

from itertools import pairwise

from servecap.analysis.aggregate import AggregateSeries
from servecap.analysis.findings import Finding
from servecap.analysis.series import ConfigSeries, ratio

TTFT_JUMP = 3.0  # TTFT mean this many times the previous level's: a jump
FLAT_OUTPUT_GAIN = 1.10  # output grows by less than 10% ...
LATENCY_RISE = 1.25  # ... while mean latency grows by more than 25%


def ttft_jump_findings(series: ConfigSeries, threshold: float = TTFT_JUMP) -> list[Finding]:
    """TTFT (mean) at least `threshold` times that of the previous level."""
    findings: list[Finding] = []
    for prev, cur in pairwise(series.levels):
        factor = ratio(cur.ttft_mean_ms, prev.ttft_mean_ms)
        if factor is None or factor < threshold:
            continue
        assert cur.ttft_mean_ms is not None and prev.ttft_mean_ms is not None
        findings.append(
            Finding(
                kind="ttft_jump",
                section="ttft",
                configs=[series.name],
                level=cur.key,
                severity="warning",
                text=(
                    f"{series.name}: mean TTFT jumps {factor:.1f}x from {prev.ttft_mean_ms:.1f} ms "
                    f"at {prev.key} to {cur.ttft_mean_ms:.1f} ms at {cur.key}: "
                    "requests queue before their first token."
                ),
                numbers={"from_ms": prev.ttft_mean_ms, "to_ms": cur.ttft_mean_ms, "factor": factor},
            )
        )
    return findings


def flat_throughput_findings(series: ConfigSeries, agg: AggregateSeries) -> list[Finding]:
    """Aggregate output that barely grows while mean latency rises: the server is saturated."""
    findings: list[Finding] = []
    for prev, cur in pairwise(series.levels):
        out_prev, out_cur = agg.at(prev.key), agg.at(cur.key)
        gain = ratio(out_cur, out_prev)
        rise = ratio(cur.latency_mean_s, prev.latency_mean_s)
        if gain is None or rise is None or not (1.0 <= gain < FLAT_OUTPUT_GAIN):
            continue
        if rise <= LATENCY_RISE:
            continue
        findings.append(
            Finding(
                kind="flat_throughput",
                section="throughput",
                configs=[series.name],
                level=cur.key,
                severity="warning",
                text=(
                    f"{series.name}: from {prev.key} to {cur.key} aggregate "
                    f"output grows only {gain:.2f}x ({out_prev:.0f} -> {out_cur:.0f} tok/s) while "
                    f"mean latency grows {rise:.2f}x ({prev.latency_mean_s:.2f} -> "
                    f"{cur.latency_mean_s:.2f} s): saturated."
                ),
                numbers={"output_gain": gain, "latency_rise": rise},
            )
        )
    return findings
