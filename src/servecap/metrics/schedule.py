"""What a level with target send times adds to its summary (open loop today).

From the records a level's window kept: the max-concurrency cap's own waits, TTFT and
latency from `scheduled_at` (what a user arriving at the target time sees, free of
coordinated omission), the rate offered, sent and achieved inside the window, and whether
the client fell behind its own schedule (client-bound). Send lateness (`sent_at -
scheduled_at`, the cap's waits included, since a user arriving then waits too) is the
`send_lateness_*` every scheduled kind gets (`metrics.lengths.lateness_fields`), over the
same kept records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from servecap.core.records import RequestRecord
from servecap.core.request_metrics import request_metrics
from servecap.core.summary import column
from servecap.kinds.window import Windowed
from servecap.stats.percentiles import describe

NS_PER_MS = 1e6
NS_PER_S = 1e9
# The client's own share of lateness (cap waits excluded) above this at p99: it could not
# keep the schedule, so the level measured the client, not the server.
CLIENT_LATE_P99_MS = 10.0


def _ms(values: Sequence[int]) -> list[float]:
    return [v / NS_PER_MS for v in values]


def _spread(prefix: str, values_ms: list[float]) -> dict[str, float | None]:
    if not values_ms:
        return {f"{prefix}_mean_ms": None, f"{prefix}_p99_ms": None, f"{prefix}_max_ms": None}
    arr = np.asarray(values_ms)
    return {
        f"{prefix}_mean_ms": float(arr.mean()),
        f"{prefix}_p99_ms": float(np.percentile(arr, 99.0)),
        f"{prefix}_max_ms": float(arr.max()),
    }


def client_lateness_ns(record: RequestRecord) -> int | None:
    """How late the client itself sent: from the target, or from the cap's admission."""
    if record.sent_at is None:
        return None
    released = max(record.scheduled_at, record.admitted_at or record.scheduled_at)
    return record.sent_at - released


def send_gap_fields(rows: Sequence[RequestRecord]) -> dict[str, Any]:
    """The client's own delay between a request's due time and its send, every kind: in a
    closed loop from its stream coming free, in a scheduled one from its target (or the
    cap's admission), less the time a new connection took to open (`connect_ms`: the
    server's accept and handshake, not the client's lag). `sent_at` is when the last byte
    went to the kernel, so this is the client's delay that TTFT no longer holds; a p99
    above the bound flags the level."""
    own = [v - round((r.connect_ms or 0.0) * NS_PER_MS)
           for r in rows if (v := client_lateness_ns(r)) is not None]
    if not own:
        return {}
    fields: dict[str, Any] = dict(_spread("send_gap", _ms(own)))
    p99 = fields["send_gap_p99_ms"]
    if p99 is not None and p99 > CLIENT_LATE_P99_MS:
        fields["client_bound"] = True
        fields["warnings"] = [
            f"client-bound: its sends lagged (send gap p99 {p99:.1f} ms after due)"
        ]
    return fields


def schedule_fields(
    windowed: Windowed, offered_rps: float | None, monitor_bound: bool = False
) -> dict[str, Any]:
    """Summary columns of a level whose records carry target times, over its window."""
    kept = windowed.kept
    sent = [r for r in kept if r.sent_at is not None]
    waited = [r for r in kept if r.admitted_at is not None]
    fields: dict[str, Any] = {
        "n_left_out": windowed.left_out,
        "window_s": windowed.span_s,
        "offered_rps": offered_rps,
        "n_cap_waited": len(waited),
        **_spread("cap_wait", _ms([r.admitted_at - r.scheduled_at for r in waited])),  # type: ignore[operator]
    }
    fields.update(_sched_metrics(kept))
    fields.update(_rates(windowed))
    own = [v for v in map(client_lateness_ns, sent) if v is not None]
    late = bool(own) and float(np.percentile(_ms(own), 99.0)) > CLIENT_LATE_P99_MS
    fields["client_bound"] = monitor_bound or late
    return fields


def _sched_metrics(kept: list[RequestRecord]) -> dict[str, float | None]:
    ttft: list[float] = []
    latency: list[float] = []
    for record in kept:
        if request_metrics(record) is None:
            continue
        assert record.first_token_at is not None and record.ended_at is not None
        ttft.append((record.first_token_at - record.scheduled_at) / NS_PER_MS)
        latency.append((record.ended_at - record.scheduled_at) / NS_PER_S)
    out: dict[str, float | None] = {}
    for metric, values in (("ttft_sched", ttft), ("latency_sched", latency)):
        out.update({column(metric, stat): v for stat, v in describe(values).items()})
    return out


def _per_second(times_ns: list[int]) -> float | None:
    """Events per second over their own span: (n - 1) / (last - first)."""
    if len(times_ns) < 2 or max(times_ns) == min(times_ns):
        return None
    return (len(times_ns) - 1) * NS_PER_S / (max(times_ns) - min(times_ns))


def _rates(windowed: Windowed) -> dict[str, float | None]:
    """Sends and successful completions per second, each over its own span in the window:
    when the server keeps up both match the offered rate; when it falls behind, ends spread
    out wider than arrivals and the achieved rate drops below the offered one."""
    sent = [r.sent_at for r in windowed.kept if r.sent_at is not None]
    done = [r.ended_at for r in windowed.kept if r.ok and r.ended_at is not None]
    return {"sent_rps": _per_second(sent), "achieved_rps": _per_second(done)}
