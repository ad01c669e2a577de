"""The run's timeline: client and server on one time axis, level by level.

Top: each request's TTFT and ITL (mean over its stream) at the moment it was sent. Below:
the server's waiting and running requests, KV usage and speculative acceptance per scrape
(acceptance from the counters' step between two scrapes). Both come from the run's files
(`requests.jsonl`, `server_metrics.jsonl`) on the same `perf_counter_ns` clock; a run
without a `server_metrics.jsonl` has no timeline. Requests are thinned to `MAX_POINTS`
evenly, so a huge run still makes a small page.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from pydantic import BaseModel, Field

from servecap.core.request_metrics import request_metrics
from servecap.storage.run_dir import Run
from servecap.storage.server_metrics_file import SERVER_METRICS_FILE, StoredScrape, read_scrapes

MAX_POINTS = 4000
NS = 1e9
SERVER_SERIES = ("waiting", "running", "kv_usage", "spec_acceptance")


class Timeline(BaseModel):
    """Seconds since the run's first event; values per series."""

    levels: list[tuple[str, float, float]] = Field(default_factory=list)  # label, start, end
    ttft: list[tuple[float, float]] = Field(default_factory=list)  # (t_s, ms)
    itl: list[tuple[float, float]] = Field(default_factory=list)
    server: dict[str, list[tuple[float, float]]] = Field(default_factory=dict)
    scrape_errors: list[tuple[float, str]] = Field(default_factory=list)


def _acceptance(scrapes: list[StoredScrape]) -> list[tuple[int, float]]:
    out: list[tuple[int, float]] = []
    for a, b in pairwise(scrapes):
        drafted = b.series.get("spec_draft_tokens", 0.0) - a.series.get("spec_draft_tokens", 0.0)
        took = b.series.get("spec_accepted_tokens", 0.0) - a.series.get("spec_accepted_tokens", 0.0)
        if drafted > 0 and took >= 0:
            out.append((b.t_ns, took / drafted))
    return out


def _requests(run: Run, t0: int, tl: Timeline) -> None:
    spans: dict[str, list[int]] = {}
    rows = [r for r in run.iter_records() if not r.warmup]
    step = max(1, len(rows) // MAX_POINTS)
    for i, record in enumerate(rows):
        if record.sent_at is not None and record.ended_at is not None:
            span = spans.setdefault(str(record.key), [record.sent_at, record.ended_at])
            span[0], span[1] = min(span[0], record.sent_at), max(span[1], record.ended_at)
        m = request_metrics(record) if i % step == 0 else None
        if m is None or record.sent_at is None:
            continue
        t = round((record.sent_at - t0) / NS, 4)
        tl.ttft.append((t, round(m.ttft_ns / 1e6, 3)))
        if m.itl_ns is not None:
            tl.itl.append((t, round(m.itl_ns / 1e6, 3)))
    tl.levels = [(k, (a - t0) / NS, (b - t0) / NS) for k, (a, b) in spans.items()]


def build_timeline(run: Run) -> Timeline | None:
    """The run's timeline, or None when it has no server scrapes (off, or an old run)."""
    path = run.path / SERVER_METRICS_FILE
    if not path.is_file():
        return None
    scrapes = list(read_scrapes(path))
    ok = [s for s in scrapes if s.error is None]
    firsts = [r.sent_at for r in run.iter_records() if r.sent_at is not None and not r.warmup]
    t0 = min([*firsts, *(s.t_ns for s in scrapes)], default=0)
    tl = Timeline()
    _requests(run, t0, tl)
    for name in SERVER_SERIES[:3]:
        tl.server[name] = [((s.t_ns - t0) / NS, s.series[name]) for s in ok if name in s.series]
    tl.server["spec_acceptance"] = [((t - t0) / NS, v) for t, v in _acceptance(ok)]
    tl.scrape_errors = [((s.t_ns - t0) / NS, s.error or "") for s in scrapes if s.error]
    return tl


def _xy(points: list[tuple[float, float]]) -> dict[str, list[float]]:
    return {"x": [p[0] for p in points], "y": [p[1] for p in points]}


def timeline_figure(tl: Timeline, title: str) -> dict[str, Any]:
    """A plotly figure dict: client latencies on top, server series below, levels shaded."""
    dots = {"type": "scatter", "mode": "markers", "marker": {"size": 4}}
    lines = {"type": "scatter", "mode": "lines"}
    data = [
        {**dots, **_xy(tl.ttft), "name": "client TTFT (ms)", "yaxis": "y3"},
        {**dots, **_xy(tl.itl), "name": "client ITL (ms)", "yaxis": "y3"},
        {**lines, **_xy(tl.server.get("waiting", [])), "name": "server waiting", "yaxis": "y2"},
        {**lines, **_xy(tl.server.get("running", [])), "name": "server running", "yaxis": "y2"},
        {**lines, **_xy(tl.server.get("kv_usage", [])), "name": "KV usage", "yaxis": "y"},
        {**lines, **_xy(tl.server.get("spec_acceptance", [])), "name": "spec acceptance",
         "yaxis": "y"},
    ]
    shapes, notes = [], []
    for i, (label, start, end) in enumerate(tl.levels):
        shapes.append({"type": "rect", "xref": "x", "yref": "paper", "x0": start, "x1": end,
                       "y0": 0, "y1": 1, "line": {"width": 0},
                       "fillcolor": "#eeeeee" if i % 2 == 0 else "#f8f8f8", "layer": "below"})
        notes.append({"x": (start + end) / 2, "y": 1.0, "xref": "x", "yref": "paper",
                      "text": label, "showarrow": False, "yanchor": "bottom"})
    layout = {
        "title": {"text": title}, "shapes": shapes, "annotations": notes,
        "xaxis": {"title": {"text": "seconds since the run's first request"}},
        "yaxis": {"domain": [0.0, 0.28], "title": {"text": "0..1"}, "range": [0, 1.05]},
        "yaxis2": {"domain": [0.33, 0.6], "title": {"text": "requests"}},
        "yaxis3": {"domain": [0.66, 1.0], "title": {"text": "ms"}, "type": "log"},
        "legend": {"orientation": "h"}, "paper_bgcolor": "#ffffff", "plot_bgcolor": "#ffffff",
    }
    return {"data": data, "layout": layout}
