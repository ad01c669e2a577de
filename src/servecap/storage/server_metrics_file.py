"""`server_metrics.jsonl`: every scrape of the server's `/metrics`, one JSON object a line.

A line is `{"t_ns", "ms", "series", "samples"}` for a scrape that worked, or
`{"t_ns", "ms", "error", "detail"}` for one that did not. `t_ns` is the scrape's midpoint on
the run's `perf_counter_ns` clock (the clock of `requests.jsonl`, dated by run.json's
anchor). `series` holds the canonical series (core/server_series.py); `samples` holds the raw
exposition samples (`name{labels}` -> value) that changed since the previous line, so an
unchanged histogram bucket is written once, not ten times a second. Every sample is parsed at
level edges and every 10 s; the scrapes between (`"full": false`) parse only the samples the
canonical series map (the parser's cost is per line). `read_scrapes` puts the sample set back
together (the unmapped ones as last seen). A torn last line (a killed run) is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from servecap.storage.safe_files import open_append

SERVER_METRICS_FILE = "server_metrics.jsonl"


Redact = Callable[[str], str | None]


class ScrapeWriter:
    """Appends scrapes, writing only the raw samples that changed.

    Every sample name (labels included) and error detail passes `redact` first: a server's
    labels may echo request headers (the bearer token, a cookie), and this file is the one
    artifact that stores labels verbatim. Names repeat every scrape, so each is redacted once.
    """

    def __init__(self, path: Path, redact: Redact) -> None:
        self._handle: IO[bytes] = open_append(path)
        self._last: dict[str, float] = {}
        self._redact = redact
        self._names: dict[str, str] = {}

    def _clean(self, name: str) -> str:
        clean = self._names.get(name)
        if clean is None:
            clean = self._names[name] = self._redact(name) or ""
        return clean

    def write(
        self, t_ns: int, ms: float, series: dict[str, float], samples: dict[str, float],
        error: str | None = None, detail: str = "", full: bool = True,
    ) -> None:
        line: dict[str, Any] = {"t_ns": t_ns, "ms": round(ms, 3)}
        if not full:
            line["full"] = False
        if error is not None:
            line.update(error=error, detail=self._redact(detail) or "")
        else:
            samples = {self._clean(k): v for k, v in samples.items()}
            changed = {k: v for k, v in samples.items() if self._last.get(k) != v}
            self._last.update(changed)
            line.update(series=series, samples=changed)
        self._handle.write(orjson.dumps(line) + b"\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()


@dataclass
class StoredScrape:
    t_ns: int
    ms: float
    series: dict[str, float] = field(default_factory=dict)
    samples: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    detail: str = ""


def read_scrapes(path: Path) -> Iterator[StoredScrape]:
    """The scrapes in `path` in order, each with its full raw sample set; none if absent."""
    if not path.is_file():
        return
    current: dict[str, float] = {}
    with path.open("rb") as handle:
        for raw in handle:
            try:
                line = orjson.loads(raw)
                t_ns, ms = int(line["t_ns"]), float(line["ms"])
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
                continue
            if line.get("error"):
                yield StoredScrape(t_ns, ms, error=str(line["error"]), detail=str(line["detail"]))
                continue
            current.update(line.get("samples") or {})
            yield StoredScrape(t_ns, ms, dict(line.get("series") or {}), dict(current))
