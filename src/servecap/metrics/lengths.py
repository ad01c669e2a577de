"""Per-level lengths sent and served, and how late requests went out against their schedule.

Sent: what each request asked for (`input_tokens_sent`, the prompt length it was built to
hold; `max_tokens_sent`). Served: what the server's usage (or the client's estimate) says
(`prompt_tokens`, `completion_tokens`) over the requests that ended ok. Each gets mean, p50
and p90. Send lateness is `sent_at - scheduled_at` over every request that went out: for a
scheduled kind (a fixed schedule, a trace replay) it measures how faithfully the client kept
the schedule; a closed loop schedules each request when its stream is free, so it has none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from servecap.core.records import RequestRecord

NS_PER_MS = 1e6
HIST_BINS = 12
# histogram name -> (sent series, served series) it compares, over shared bin edges
HISTOGRAMS = {
    "input": ("input_tokens_sent", "prompt_tokens"),
    "output": ("max_tokens_sent", "completion_tokens"),
}


def _stats(prefix: str, values: Sequence[int | float]) -> dict[str, float | None]:
    if not values:
        return {}
    array = np.asarray(values, dtype=np.float64)
    return {
        f"{prefix}_mean": float(array.mean()),
        f"{prefix}_p50": float(np.percentile(array, 50)),
        f"{prefix}_p90": float(np.percentile(array, 90)),
    }


def length_fields(rows: Sequence[RequestRecord]) -> dict[str, Any]:
    """The lengths each level sent and served (mean, p50, p90; means of served already
    exist as `prompt_tokens_mean` / `completion_tokens_mean`)."""
    sent_in = [r.input_tokens_sent for r in rows if r.input_tokens_sent is not None]
    sent_out = [r.max_tokens_sent for r in rows if r.max_tokens_sent is not None]
    ok = [r for r in rows if r.ok]
    served_in = [r.prompt_tokens for r in ok if r.prompt_tokens is not None]
    served_out = [r.completion_tokens for r in ok if r.completion_tokens is not None]
    out: dict[str, Any] = {}
    out.update(_stats("input_tokens_sent", sent_in))
    out.update(_stats("output_tokens_sent", sent_out))
    served = {**_stats("prompt_tokens", served_in), **_stats("completion_tokens", served_out)}
    out.update({k: v for k, v in served.items() if not k.endswith("_mean")})
    return out


def lateness_fields(rows: Sequence[RequestRecord]) -> dict[str, Any]:
    """Send lateness (ms) of a level sent at target times: mean, p99 and max."""
    late = [
        (r.sent_at - r.scheduled_at) / NS_PER_MS for r in rows if r.sent_at is not None
    ]
    if not late:
        return {}
    array = np.asarray(late)
    return {
        "send_lateness_mean_ms": float(array.mean()),
        "send_lateness_p99_ms": float(np.percentile(array, 99)),
        "send_lateness_max_ms": float(array.max()),
    }


def length_histograms(rows: Sequence[RequestRecord]) -> dict[str, Any]:
    """Per dimension (`input`, `output`): bin `edges` shared by the `sent` and `served`
    counts (served over requests that ended ok), so a report draws both on one axis."""
    out: dict[str, Any] = {}
    ok = [r for r in rows if r.ok]
    for name, (sent_field, served_field) in HISTOGRAMS.items():
        sent = [v for r in rows if (v := getattr(r, sent_field)) is not None]
        served = [v for r in ok if (v := getattr(r, served_field)) is not None]
        if not sent and not served:
            continue
        top = max([*sent, *served])
        edges = np.unique(np.linspace(0, top, HIST_BINS + 1).round())
        if edges.size < 2:
            edges = np.array([0.0, float(top) + 1])
        out[name] = {
            "edges": edges.tolist(),
            "sent": np.histogram(sent, edges)[0].tolist(),
            "served": np.histogram(served, edges)[0].tolist(),
        }
    return out
